"""Syntactic Attention (Russin et al. 2019).

`syntactic_attention_backbone` and `syntactic_attention_decoder` (Keras only, any backend):
the backbone and its decoder (its other layers are in `compgen_tf.layers`);
`syntactic_attention` (TensorFlow): the task model, imported on first use.
"""

from compgen_tf.layers import SyntaxShift, WordNoise
from compgen_tf.lazy import lazy_attributes
from compgen_tf.models.syntactic_attention.syntactic_attention_backbone import (
    SyntacticAttentionBackbone)
from compgen_tf.models.syntactic_attention.syntactic_attention_decoder import (
    SyntacticAttentionDecoder)

__getattr__ = lazy_attributes(__name__, {
    "SyntacticAttention": "compgen_tf.models.syntactic_attention.syntactic_attention"})
__all__ = ["SyntacticAttention", "SyntacticAttentionBackbone", "SyntacticAttentionDecoder",
           "SyntaxShift", "WordNoise"]
