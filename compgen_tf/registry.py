"""Every model the library can build and train, by name.

`MODELS` maps each registered name to a `ModelSpec` (what it trains on, its tasks);
`build(name)` returns the task model with its default arguments. The SCAN models also have
their class in `SCAN_MODELS`; the models that train on episodes or toy tasks name the
module that trains them in `TASK_MODELS`.
"""

from __future__ import annotations

import dataclasses

from compgen_tf.config import ConfigError
from compgen_tf.models.attention_seq2seq import AttentionSeq2Seq
from compgen_tf.models.equivariant_seq2seq import EquivariantSeq2Seq
from compgen_tf.models.syntactic_attention import SyntacticAttention

# Models that train on a SCAN split, by name.
SCAN_MODELS = {
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


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """What a registered model is.

    Attributes:
        name: the name (`--model NAME`).
        trains_on: "scan" (a SCAN split), "episodes" (meta-learning episodes) or "toy" (a
            toy task of "Symmetry and systematicity").
        tasks: the splits or tasks it trains on; `build` uses the first by default.
        description: one line.
    """

    name: str
    trains_on: str
    tasks: tuple
    description: str


def _specs():
    import tfds_scan
    from tfds_scan import episodes

    toy = {"symbol_convolution": (("rule_learning", "composition"),
                                  "width-1 convolutions over symbols"),
           "mlp_baseline": (("rule_learning", "composition"), "multi-layer perceptron baseline"),
           "recurrent_baseline": (("rule_learning", "composition"),
                                  "recurrent network / encoder-decoder baseline"),
           "stack_lstm": (("palindromes", "palindromes_depth"), "LSTM with a StackLSTMCell"),
           "lstm_baseline": (("palindromes", "palindromes_depth"), "standard LSTM baseline")}
    scan = {"seq2seq": "LSTM seq2seq with attention (Lake & Baroni 2018 baselines)",
            "equivariant_seq2seq": "permutation-equivariant seq2seq (Gordon et al. 2020)",
            "syntactic_attention": "Syntactic Attention (Russin et al. 2019)"}
    specs = [ModelSpec(name, "scan", tuple(tfds_scan.CONFIG_NAMES), text)
             for name, text in scan.items()]
    specs.append(ModelSpec("meta_seq2seq", "episodes", tuple(episodes.TASK_NAMES),
                           "meta seq2seq with a key-value memory (Lake 2019)"))
    specs += [ModelSpec(name, "toy", tasks, text) for name, (tasks, text) in toy.items()]
    return {spec.name: spec for spec in specs}


MODELS: dict[str, ModelSpec] = _specs()


def spec(name: str) -> ModelSpec:
    """The `ModelSpec` of `name`; an unknown name is a ValueError listing the known ones."""
    try:
        return MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; available: {sorted(MODELS)}") from None


def build(name: str, task: str | None = None, **model_args):
    """The task model `name` for `task` (default: its first), with default arguments that
    `model_args` override.

    Returns a `Seq2SeqModel` (SCAN models, with SCAN's vocabularies), a `MetaSeq2Seq`
    (with the episode task's vocabularies) or a `ToyTask`; every one has a functional
    `.backbone` and trains with `fit`.
    """
    model = spec(name)
    task = task or model.tasks[0]
    if task not in model.tasks:
        raise ValueError(f"model {name!r} does not train on {task!r}; its tasks: "
                         f"{', '.join(model.tasks)}")
    if model.trains_on == "scan":
        return build_model(name, model_args, *scan_vocabularies())
    if model.trains_on == "episodes":
        from compgen_tf.meta_training import build_model as build_meta_model

        return build_meta_model(task, model_args)
    from compgen_tf import toy_runs
    from compgen_tf.models.toy_task import ToyTask

    backbone = toy_runs.build_model(name, task, model_args)
    toy_task = ToyTask(backbone, name=f"{name}_{task}")
    toy_task.compile_from_config(backbone.get_compile_config())
    return toy_task


def model_class(name: str):
    """The class of the SCAN model registered as `name`."""
    try:
        return SCAN_MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; available: {sorted(SCAN_MODELS)}") from None


def build_model(name: str, model_args: dict, source_words, target_words):
    """Instantiates SCAN model `name` with its vocabularies; bad arguments give a clear error.

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
    """A `ConfigError` unless SCAN model `name` can be built from `model_args`.

    Called before a run directory is written, so that a bad value is reported as such
    instead of leaving a run directory that the corrected command would refuse.
    """
    words, actions = scan_vocabularies()
    try:
        build_model(name, model_args, words, actions)
    except (ValueError, TypeError) as error:
        raise ConfigError(f"model_args of {name}: {error}") from error
