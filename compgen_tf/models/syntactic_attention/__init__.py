"""Syntactic Attention (Russin et al. 2019).

`syntactic_attention_backbone` (Keras only, any backend): its layers and the backbone;
`syntactic_attention` (TensorFlow): the task model, imported on first use.
"""

from compgen_tf.lazy import lazy_attributes
from compgen_tf.models.syntactic_attention.syntactic_attention_backbone import (
    SyntacticAttentionBackbone, SyntacticAttentionDecoder, SyntaxShift, WordNoise)

__getattr__ = lazy_attributes(__name__, {
    "SyntacticAttention": "compgen_tf.models.syntactic_attention.syntactic_attention"})
__all__ = ["SyntacticAttention", "SyntacticAttentionBackbone", "SyntacticAttentionDecoder",
           "SyntaxShift", "WordNoise"]
