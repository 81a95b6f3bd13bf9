"""Permutation-equivariant seq2seq (Gordon et al. 2020).

`equivariant_seq2seq_backbone` (Keras only, any backend): the decoder layer and the
backbone; `equivariant_seq2seq` (TensorFlow): the task model, imported on first use.
"""

from compgen_tf.lazy import lazy_attributes
from compgen_tf.models.equivariant.equivariant_seq2seq_backbone import (
    EquivariantAttentionDecoder, EquivariantSeq2SeqBackbone)

__getattr__ = lazy_attributes(__name__, {
    "EquivariantSeq2Seq": "compgen_tf.models.equivariant.equivariant_seq2seq"})
__all__ = ["EquivariantAttentionDecoder", "EquivariantSeq2Seq", "EquivariantSeq2SeqBackbone"]
