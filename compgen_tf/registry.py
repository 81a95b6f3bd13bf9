"""The models the command-line tools know, by name."""

from __future__ import annotations

from compgen_tf.models.attention_seq2seq import AttentionSeq2Seq
from compgen_tf.models.equivariant_seq2seq import EquivariantSeq2Seq
from compgen_tf.models.syntactic_attention import SyntacticAttention

MODELS = {
    "seq2seq": AttentionSeq2Seq,
    "equivariant_seq2seq": EquivariantSeq2Seq,
    "syntactic_attention": SyntacticAttention,
}


# Models that train on a toy or episodic task instead of a SCAN split: model name -> the module
# whose `train_from_cli(args, command) -> int` handles `python -m compgen_tf.train --model NAME
# --task TASK` (same run-directory layout: config.json, metrics.json, resumable checkpoints).
TASK_MODELS: dict[str, str] = {
    # "Symmetry and systematicity": rule learning, composition and palindromes.
    **{name: "compgen_tf.toy_runs" for name in (
        "symbol_convolution", "mlp_baseline", "recurrent_baseline", "stack_lstm",
        "lstm_baseline")},
    # Meta seq2seq (Lake 2019): episodic meta-training.
    "meta_seq2seq": "compgen_tf.meta_training",
}


def model_class(name: str):
    """The model class registered as `name`."""
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; available: {sorted(MODELS)}") from None


def build_model(name: str, model_args: dict, source_words, target_words):
    """Instantiates model `name` with its vocabularies; bad arguments give a clear error."""
    cls = model_class(name)
    try:
        return cls(source_words, target_words, **model_args)
    except TypeError as error:
        raise ValueError(f"bad model_args for {name!r} ({cls.__name__}): {error}") from error
