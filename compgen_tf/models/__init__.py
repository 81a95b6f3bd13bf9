"""The library's models (importing registers them for `.keras` loading).

Each family has a functional backbone (`keras.Input`s to teacher-forced logits) and a task
model that holds it with its preprocessor (strings to ids and back) and trains with `fit`.
One subpackage per family (`seq2seq`, `equivariant`, `syntactic_attention`, `meta_seq2seq`,
`symmetry` for the toy-task models, `transformer`); the parts they share sit here (`Backbone`,
`Seq2SeqModel`, `Seq2SeqPreprocessor`, `RecurrentDecoder`, `ToyTask`).

The backbones and their layers use `keras.ops` only and run on every Keras backend; the task
models (string preprocessing, serving, the training step) need TensorFlow. Without
TensorFlow this package still imports, and a task model raises its import error on use.
"""

import importlib

from compgen_tf.lazy import lazy_attributes
from compgen_tf.models.backbone import Backbone
from compgen_tf.models.equivariant import EquivariantAttentionDecoder, EquivariantSeq2SeqBackbone
from compgen_tf.models.meta_seq2seq import MetaDecoder, MetaSeq2SeqBackbone
from compgen_tf.models.recurrent_decoder import RecurrentDecoder
from compgen_tf.models.seq2seq import AttentionSeq2SeqBackbone, LuongAttentionDecoder
from compgen_tf.models.symmetry.composition import ConvolutionalEncoderDecoder
from compgen_tf.models.syntactic_attention import (SyntacticAttentionBackbone,
                                                   SyntacticAttentionDecoder, SyntaxShift,
                                                   WordNoise)
from compgen_tf.models.toy_task import ToyTask
from compgen_tf.models.transformer import TransformerBackbone, TransformerDecoder

_TASK_MODELS = {
    "AttentionSeq2Seq": "compgen_tf.models.seq2seq.attention_seq2seq",
    "CountingSeq2Seq": "compgen_tf.models.seq2seq.counting_seq2seq",
    "EquivariantSeq2Seq": "compgen_tf.models.equivariant.equivariant_seq2seq",
    "MetaSeq2Seq": "compgen_tf.models.meta_seq2seq.meta_seq2seq",
    "Seq2SeqModel": "compgen_tf.models.seq2seq_model",
    "Seq2SeqPreprocessor": "compgen_tf.models.preprocessor",
    "SyntacticAttention": "compgen_tf.models.syntactic_attention.syntactic_attention",
    "TransformerSeq2Seq": "compgen_tf.models.transformer.transformer_seq2seq",
}
__getattr__ = lazy_attributes(__name__, _TASK_MODELS)

try:
    import tensorflow  # noqa: F401
except ModuleNotFoundError as error:
    if error.name != "tensorflow":
        raise
else:  # register the task models for `.keras` loading, as `import compgen_tf.models` always did
    for _module in sorted(set(_TASK_MODELS.values())):
        importlib.import_module(_module)

__all__ = ["AttentionSeq2Seq", "AttentionSeq2SeqBackbone", "Backbone",
           "ConvolutionalEncoderDecoder", "CountingSeq2Seq", "EquivariantAttentionDecoder",
           "EquivariantSeq2Seq", "EquivariantSeq2SeqBackbone", "LuongAttentionDecoder",
           "MetaDecoder", "MetaSeq2Seq", "MetaSeq2SeqBackbone", "RecurrentDecoder",
           "Seq2SeqModel", "Seq2SeqPreprocessor", "SyntacticAttention",
           "SyntacticAttentionBackbone", "SyntacticAttentionDecoder", "SyntaxShift", "ToyTask",
           "WordNoise", "TransformerBackbone", "TransformerDecoder", "TransformerSeq2Seq"]
