"""The library's models (importing registers them for `.keras` loading)."""

from compgen_tf.models.attention_seq2seq import AttentionSeq2Seq
from compgen_tf.models.composition import ConvolutionalEncoderDecoder
from compgen_tf.models.equivariant_seq2seq import EquivariantSeq2Seq
from compgen_tf.models.meta_seq2seq import MetaSeq2Seq
from compgen_tf.models.seq2seq_model import Seq2SeqModel
from compgen_tf.models.syntactic_attention import SyntacticAttention

__all__ = ["AttentionSeq2Seq", "ConvolutionalEncoderDecoder", "EquivariantSeq2Seq", "MetaSeq2Seq",
           "Seq2SeqModel", "SyntacticAttention"]
