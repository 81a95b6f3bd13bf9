"""The library's models (importing registers them for `.keras` loading).

Each family has a functional backbone (`keras.Input`s to teacher-forced logits) and a task
model that holds it with its preprocessor (strings to ids and back) and trains with `fit`.
One subpackage per family (`seq2seq`, `equivariant`, `syntactic_attention`, `meta_seq2seq`,
`symmetry` for the toy-task models); the parts they share sit here (`Backbone`,
`Seq2SeqModel`, `Seq2SeqPreprocessor`, `RecurrentDecoder`, `ToyTask`).
"""

from compgen_tf.models.backbone import Backbone
from compgen_tf.models.equivariant import (EquivariantAttentionDecoder, EquivariantSeq2Seq,
                                           EquivariantSeq2SeqBackbone)
from compgen_tf.models.meta_seq2seq import MetaDecoder, MetaSeq2Seq, MetaSeq2SeqBackbone
from compgen_tf.models.preprocessor import Seq2SeqPreprocessor
from compgen_tf.models.recurrent_decoder import RecurrentDecoder
from compgen_tf.models.seq2seq import (AttentionSeq2Seq, AttentionSeq2SeqBackbone,
                                       LuongAttentionDecoder)
from compgen_tf.models.seq2seq_model import Seq2SeqModel
from compgen_tf.models.symmetry.composition import ConvolutionalEncoderDecoder
from compgen_tf.models.syntactic_attention import (SyntacticAttention,
                                                   SyntacticAttentionBackbone,
                                                   SyntacticAttentionDecoder, SyntaxShift,
                                                   WordNoise)
from compgen_tf.models.toy_task import ToyTask

__all__ = ["AttentionSeq2Seq", "AttentionSeq2SeqBackbone", "Backbone",
           "ConvolutionalEncoderDecoder", "EquivariantAttentionDecoder", "EquivariantSeq2Seq",
           "EquivariantSeq2SeqBackbone", "LuongAttentionDecoder", "MetaDecoder", "MetaSeq2Seq",
           "MetaSeq2SeqBackbone", "RecurrentDecoder", "Seq2SeqModel", "Seq2SeqPreprocessor",
           "SyntacticAttention", "SyntacticAttentionBackbone", "SyntacticAttentionDecoder",
           "SyntaxShift", "ToyTask", "WordNoise"]
