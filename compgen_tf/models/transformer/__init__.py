"""The Transformer encoder-decoder (Vaswani et al. 2017) with the variants of the
compositional-generalization studies: absolute or relative positions, universal layers.

`decoder`, `transformer_backbone` (Keras only, any backend): the decoder and the backbone,
built from the public layers `compgen_tf.layers.TransformerEncoderLayer`,
`TransformerDecoderLayer`, `RelativeAttention` and `TokenAndPositionEmbedding`;
`transformer_seq2seq` (TensorFlow): the task model, imported on first use.
"""

from compgen_tf.lazy import lazy_attributes
from compgen_tf.models.transformer.decoder import TransformerDecoder
from compgen_tf.models.transformer.transformer_backbone import TransformerBackbone

__getattr__ = lazy_attributes(__name__, {
    "TransformerSeq2Seq": "compgen_tf.models.transformer.transformer_seq2seq"})
__all__ = ["TransformerBackbone", "TransformerDecoder", "TransformerSeq2Seq"]
