"""The LSTM seq2seq baseline with Luong attention (Lake & Baroni 2018).

`attention_seq2seq_backbone` (Keras only, any backend): the decoder layer and the backbone;
`attention_seq2seq` (TensorFlow): the task model, imported on first use;
`counting_seq2seq` (TensorFlow): the same with a length head whose count steers the
attention (the length-split model of docs/length_generalization.md).
"""

from compgen_tf.lazy import lazy_attributes
from compgen_tf.models.seq2seq.attention_seq2seq_backbone import (AttentionSeq2SeqBackbone,
                                                                  LuongAttentionDecoder)

__getattr__ = lazy_attributes(__name__, {
    "AttentionSeq2Seq": "compgen_tf.models.seq2seq.attention_seq2seq",
    "CountingSeq2Seq": "compgen_tf.models.seq2seq.counting_seq2seq"})
__all__ = ["AttentionSeq2Seq", "AttentionSeq2SeqBackbone", "CountingSeq2Seq",
           "LuongAttentionDecoder"]
