"""Syntactic Attention (Russin et al. 2019)."""

from compgen_tf.models.syntactic_attention.syntactic_attention import (
    SyntacticAttention, SyntacticAttentionBackbone, SyntacticAttentionDecoder, SyntaxShift,
    WordNoise)

__all__ = ["SyntacticAttention", "SyntacticAttentionBackbone", "SyntacticAttentionDecoder",
           "SyntaxShift", "WordNoise"]
