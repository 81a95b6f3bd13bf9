"""Every model the library can build and train, by name: data, and the builders it feeds.

`MODELS` maps each registered name to a `ModelSpec`: its task class and backbone class, the
name of the kind of experiment that trains it (`trains_on`: "scan", "episodes" or "toy"),
its tasks and a description. The registry knows models, not runs: the `Experiment` of a
kind (how its runs are configured, trained, scored and reported, what `train`, `evaluate`,
`reproduce` and `tune` use) is `compgen_tf.experiments.kinds.experiment_for(name)`.
`build(name)` returns the task model with its default arguments. The SCAN models also have
their class in `SCAN_MODELS`.
"""

from __future__ import annotations

import dataclasses

import tfds_scan
from tfds_scan import episodes

from compgen_tf import names
from compgen_tf.errors import ConfigError
from compgen_tf.models import (AttentionSeq2SeqBackbone, EquivariantSeq2SeqBackbone,
                               MetaSeq2SeqBackbone, SyntacticAttentionBackbone)
from compgen_tf.models.equivariant.equivariant_seq2seq import EquivariantSeq2Seq
from compgen_tf.models.meta_seq2seq.meta_seq2seq import MetaSeq2Seq
from compgen_tf.models.seq2seq.attention_seq2seq import AttentionSeq2Seq
from compgen_tf.models.seq2seq.counting_seq2seq import CountingSeq2Seq
from compgen_tf.models.syntactic_attention.syntactic_attention import SyntacticAttention
from compgen_tf.models.toy_task import ToyTask
from compgen_tf.models.transformer import TransformerBackbone
from compgen_tf.models.transformer.transformer_seq2seq import TransformerSeq2Seq

# Models that train on a SCAN split, by name.
SCAN_MODELS = {
    "seq2seq": AttentionSeq2Seq,
    "equivariant_seq2seq": EquivariantSeq2Seq,
    "syntactic_attention": SyntacticAttention,
    "counting_seq2seq": CountingSeq2Seq,
    "transformer": TransformerSeq2Seq,
}
_SCAN_BACKBONES = {
    "seq2seq": AttentionSeq2SeqBackbone,
    "equivariant_seq2seq": EquivariantSeq2SeqBackbone,
    "syntactic_attention": SyntacticAttentionBackbone,
    "counting_seq2seq": AttentionSeq2SeqBackbone,
    "transformer": TransformerBackbone,
}
# The toy-task models of "Symmetry and systematicity": name -> (the architecture their
# builders take, the tasks, one line). Their backbones are functional models built by
# `compgen_tf.models.symmetry` for the task (`build_toy_backbone`).
TOY_MODELS = {
    "symbol_convolution": ("convolution", ("rule_learning", "composition"),
                           "width-1 convolutions over symbols"),
    "mlp_baseline": ("mlp", ("rule_learning", "composition"), "multi-layer perceptron baseline"),
    "recurrent_baseline": ("recurrent", ("rule_learning", "composition"),
                           "recurrent network / encoder-decoder baseline"),
    "stack_lstm": ("stack", ("palindromes", "palindromes_depth"), "LSTM with a StackLSTMCell"),
    "lstm_baseline": ("lstm", ("palindromes", "palindromes_depth"),
                      "standard LSTM baseline"),
}
# Toy tasks whose examples are (command, actions) pairs: the SCAN models train on them as
# on a split (`--model seq2seq --split composition`), each seed on its own draw.
TOY_PAIR_SPLITS = names.TOY_PAIR_SPLITS
# The SCAN models that also train on a data folder of the user's (`--split path/to/folder`,
# `tfds_scan.folder_pairs`): those that train on the English-French set too, whose words are
# not SCAN's, and the Transformer. The equivariant model's symmetries are SCAN's words, and
# the counting model's length head is built for SCAN's length split.
FOLDER_MODELS = ("seq2seq", "syntactic_attention", "transformer")


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    """What a registered model is.

    Attributes:
        name: the name (`--model NAME`).
        trains_on: the kind of experiment that trains it, by name: "scan" (a SCAN split),
            "episodes" (meta-learning episodes) or "toy" (a toy task of "Symmetry and
            systematicity"); `compgen_tf.experiments.kinds.experiment_for` gives its
            `Experiment`.
        tasks: the splits or tasks it trains on; `build` uses the first by default.
        description: one line.
        task_class: the class of its task models.
        backbone_class: the class of its backbones; None for the toy-task models, whose
            backbones are functional `keras.Model`s.
    """

    name: str
    trains_on: str
    tasks: tuple
    description: str
    task_class: type
    backbone_class: type | None


def _specs():
    scan = {"seq2seq": "LSTM seq2seq with attention (Lake & Baroni 2018 baselines)",
            "equivariant_seq2seq": "permutation-equivariant seq2seq (Gordon et al. 2020)",
            "syntactic_attention": "Syntactic Attention (Russin et al. 2019)",
            "counting_seq2seq": "LSTM seq2seq with a length head steering its attention "
                                "(the length split)",
            "transformer": "Transformer encoder-decoder, absolute or relative positions, "
                           "optionally universal (Vaswani et al. 2017; Csordás et al. 2021)"}
    # The baseline and Syntactic Attention also train on the English-French set (the short
    # Syntactic Attention paper's translation experiment): the same experiment, other pairs.
    # The equivariant model's symmetries are SCAN's words, so it stays on SCAN; so does the
    # counting model, built for SCAN's length split.
    # The baseline is also the sequence-to-sequence baseline of the composition toy task.
    # Those and the Transformer also train on COGS (sentences -> logical forms), as on a
    # folder of the user's.
    translates = ("seq2seq", "syntactic_attention")
    specs = [ModelSpec(name, "scan", tuple(tfds_scan.CONFIG_NAMES) + (
                 tuple(tfds_scan.MT_CONFIG_NAMES) if name in translates else ())
                       + (TOY_PAIR_SPLITS if name == "seq2seq" else ())
                       + (tuple(tfds_scan.COGS_CONFIG_NAMES) if name in FOLDER_MODELS else ()),
                       text, SCAN_MODELS[name], _SCAN_BACKBONES[name])
             for name, text in scan.items()]
    specs.append(ModelSpec("meta_seq2seq", "episodes", tuple(episodes.TASK_NAMES),
                           "meta seq2seq with a key-value memory (Lake 2019)", MetaSeq2Seq,
                           MetaSeq2SeqBackbone))
    specs += [ModelSpec(name, "toy", tasks, text, ToyTask, None)
              for name, (_, tasks, text) in TOY_MODELS.items()]
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
        return build_meta_model(task, model_args)
    backbone = build_toy_backbone(name, task, model_args)
    toy_task = ToyTask(backbone, name=f"{name}_{task}")
    toy_task.compile_from_config(backbone.get_compile_config())
    return toy_task


def build_meta_model(task: str, model_args: dict) -> MetaSeq2Seq:
    """A `MetaSeq2Seq` with the vocabularies of the episode task `task`."""
    words, actions = episodes.vocabularies(task)
    try:
        return MetaSeq2Seq.from_words(words, actions, **model_args)
    except TypeError as error:
        raise ValueError(f"bad model_args for 'meta_seq2seq': {error}") from error


def build_toy_backbone(name: str, task: str, model_args: dict):
    """The (compiled) functional backbone of toy-task model `name` for `task`; bad arguments
    give a clear error."""
    tasks = TOY_MODELS[name][1] if name in TOY_MODELS else None
    if task not in (tasks or ()):
        raise ValueError(f"model {name!r} does not train on task {task!r}; "
                         f"its tasks: {tasks}")
    architecture = TOY_MODELS[name][0]
    try:
        if task == "rule_learning":
            from compgen_tf.models.symmetry.rule_learning import build_rule_learning_model
            return build_rule_learning_model(architecture, **model_args)
        if task == "composition":
            from compgen_tf.models.symmetry.composition import build_composition_model
            return build_composition_model(architecture, **model_args)
        from compgen_tf.models.symmetry.palindromes import build_palindrome_model
        return build_palindrome_model(architecture, **model_args)
    except TypeError as error:
        raise ValueError(f"bad model_args for {name!r} on {task!r}: {error}") from error


def model_class(name: str):
    """The class of the SCAN model registered as `name`."""
    try:
        return SCAN_MODELS[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; available: {sorted(SCAN_MODELS)}") from None


def build_model(name: str, model_args: dict, source_words, target_words, train_commands=None):
    """Instantiates SCAN model `name` with its vocabularies; bad arguments give a clear error.

    Every model here reads SCAN, so it refuses commands outside SCAN's language
    (`command_grammar="scan"`: a per-row error in an export) unless `model_args` says
    otherwise. `train_commands`, when given, fill in the arguments that a model takes from
    its training data (a class's `data_arguments`, e.g. Syntactic Attention's tying).
    """
    cls = model_class(name)
    if train_commands is not None and hasattr(cls, "data_arguments"):
        model_args = cls.data_arguments(model_args, list(train_commands))
    try:
        return cls.from_words(source_words, target_words,
                              **{"command_grammar": "scan", **model_args})
    except TypeError as error:
        raise ValueError(f"bad model_args for {name!r} ({cls.__name__}): {error}") from error


def scan_vocabularies():
    """All of SCAN's command words and action tokens: any SCAN model builds on them."""
    words = sorted({w for c in tfds_scan.all_commands() for w in c.split()})
    return words, ["I_JUMP", "I_LOOK", "I_RUN", "I_TURN_LEFT", "I_TURN_RIGHT", "I_WALK"]


def check_model_values(name: str, model_args: dict) -> None:
    """A `ConfigError` unless SCAN model `name` can be built from `model_args` (on SCAN's
    whole vocabulary): how a search space's values are checked before a search starts.
    (A run checks the names of its model_args when its configuration is resolved, and their
    values where it builds its model, once.)
    """
    words, actions = scan_vocabularies()
    try:
        # No training commands: arguments taken from them are checked, not filled in.
        build_model(name, model_args, words, actions, train_commands=[])
    except (ValueError, TypeError) as error:
        raise ConfigError(f"model_args of {name}: {error}") from error
