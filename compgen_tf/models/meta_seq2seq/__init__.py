"""Meta seq2seq with a key-value memory (Lake 2019).

`meta_seq2seq_backbone` (Keras only, any backend): the decoder layer and the backbone;
`meta_seq2seq` (TensorFlow): the task model, imported on first use.
"""

from compgen_tf.lazy import lazy_attributes
from compgen_tf.models.meta_seq2seq.meta_seq2seq_backbone import MetaDecoder, MetaSeq2SeqBackbone

__getattr__ = lazy_attributes(__name__, {
    "MetaSeq2Seq": "compgen_tf.models.meta_seq2seq.meta_seq2seq"})
__all__ = ["MetaDecoder", "MetaSeq2Seq", "MetaSeq2SeqBackbone"]
