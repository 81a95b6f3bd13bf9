"""The models the command-line tools know, by name."""

from __future__ import annotations

from compgen_tf.config import ConfigError
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
    """Instantiates model `name` with its vocabularies; bad arguments give a clear error.

    Every model here reads SCAN, so it refuses commands outside SCAN's language
    (`command_grammar="scan"`: a per-row error in an export) unless `model_args` says
    otherwise.
    """
    cls = model_class(name)
    try:
        return cls(source_words, target_words, **{"command_grammar": "scan", **model_args})
    except TypeError as error:
        raise ValueError(f"bad model_args for {name!r} ({cls.__name__}): {error}") from error


def scan_vocabularies():
    """All of SCAN's command words and action tokens: any SCAN model builds on them."""
    import tfds_scan

    words = sorted({w for c in tfds_scan.all_commands() for w in c.split()})
    return words, ["I_JUMP", "I_LOOK", "I_RUN", "I_TURN_LEFT", "I_TURN_RIGHT", "I_WALK"]


def check_model_args(name: str, model_args: dict) -> None:
    """A `ConfigError` unless model `name` can be built from `model_args`.

    Called before a run directory is written, so that a bad value is reported as such
    instead of leaving a run directory that the corrected command would refuse.
    """
    words, actions = scan_vocabularies()
    try:
        build_model(name, model_args, words, actions)
    except (ValueError, TypeError) as error:
        raise ConfigError(f"model_args of {name}: {error}") from error
