"""Permutation-equivariant seq2seq (Gordon et al. 2020)."""

from compgen_tf.models.equivariant.equivariant_seq2seq import (EquivariantAttentionDecoder,
                                                               EquivariantSeq2Seq,
                                                               EquivariantSeq2SeqBackbone)

__all__ = ["EquivariantAttentionDecoder", "EquivariantSeq2Seq", "EquivariantSeq2SeqBackbone"]
