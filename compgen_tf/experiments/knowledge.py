"""What a configuration knows about its benchmark without learning it from the data.

Kim (2021, Table 1) separates the methods for compositional generalization that encode
knowledge of the benchmark (its grammar, lexicon or word classes) from those that learn
everything from the training data. Several configurations of this library encode such
knowledge: the equivariant model's declared symmetry group, the meta-learner's training
episodes, the symbol convolution's weight sharing over the alphabet, Syntactic Attention's
bare-word tie. `benchmark_knowledge` reads it off a configuration's settings, so that every
results file, whenever it was trained, is labelled from the settings it records; each
committed configuration that has any also says so in its `knowledge` note
(`tests/test_knowledge.py` keeps the two in step).

Not counted: the SCAN grammar check that SCAN models apply to their inputs
(`model_args.command_grammar`), which refuses commands outside SCAN's language and so changes
no prediction on SCAN's test sets, all of whose commands are in it; and architectures that
are general-purpose biases fitted on the training data (a stack, a length head).

Example:
    >>> from compgen_tf.experiments.knowledge import benchmark_knowledge
    >>> [k.tag for k in benchmark_knowledge("equivariant_seq2seq", "addprim_jump",
    ...                                     {"symmetry": "verb"})]
    ['declared group: verbs']
"""

from __future__ import annotations

import dataclasses

__all__ = ["LEARNED", "Knowledge", "benchmark_knowledge", "knowledge_cell"]

# The table cell of a configuration that encodes nothing of its benchmark (long, short).
LEARNED = ("learned from the data", "learned")


@dataclasses.dataclass(frozen=True)
class Knowledge:
    """One piece of benchmark knowledge a configuration encodes.

    Attributes:
        tag: a few words for a table cell ("declared group: verbs").
        what: the sentence that says what is encoded and where it comes from.
    """

    tag: str
    what: str


_GROUPS = {
    "verb": ("verbs", "SCAN's four verbs (jump, look, run, walk) and their four actions"),
    "direction": ("directions", "SCAN's two directions (left, right) and their two turns"),
    "verb+direction": ("verbs and directions", "SCAN's four verbs and two directions, with "
                                               "their actions"),
}

# Meta seq2seq's tasks: what their meta-training episodes are built from (tfds_scan.episodes).
_EPISODES = {
    "add_jump_permutation": ("episodes: verb class",
                             "meta-training episodes permute the actions of SCAN's four verbs, "
                             "so the verb class is given, not learned"),
    "add_jump_augmentation": ("episodes: verb class",
                              "meta-training episodes put 20 invented primitives in the places "
                              "of SCAN's verbs, so the verb class is given, not learned"),
    "around_right": ("episodes: direction class",
                     "meta-training episodes put invented directions in the places of left "
                     "and right, so the direction class is given, not learned"),
    "length": ("episodes: verb class",
               "meta-training episodes put invented primitives in the places of SCAN's "
               "verbs, so the verb class is given, not learned"),
    "length_dev": ("episodes: verb class",
                   "meta-training episodes put invented primitives in the places of SCAN's "
                   "verbs, so the verb class is given, not learned"),
    "mutual_exclusivity": ("episodes: one-to-one maps",
                           "meta-training episodes are one-to-one maps of the task's four "
                           "words onto its four colours"),
}


def benchmark_knowledge(model: str, task: str | None, model_args: dict) -> list[Knowledge]:
    """The benchmark knowledge that `model` with `model_args`, trained on `task`, encodes.

    Args:
        model: a registered model name.
        task: the SCAN split or task it trains on (None when not known).
        model_args: the configuration's `model_args` (only the keys given; a key left out
            takes the model's default).

    Returns:
        The pieces of knowledge, empty when everything is learned from the training data.
    """
    found = []
    if model == "syntactic_attention" and model_args.get("syntax_tying") == "bare_words":
        found.append(Knowledge(
            "bare-word syntax tie",
            "a word seen only as a one-word command takes the mean syntactic row of the "
            "words seen both alone and in longer commands, a tie read from how SCAN's words "
            "appear; on SCAN it makes an unseen primitive a verb like walk, run and look"))
    if model == "equivariant_seq2seq":
        symmetry = model_args.get("symmetry", "verb")
        if isinstance(symmetry, str) and symmetry in _GROUPS:
            short, words = _GROUPS[symmetry]
            found.append(Knowledge(f"declared group: {short}",
                                   f"a declared symmetry group cycling {words}, written "
                                   "from SCAN's lexicon"))
        elif symmetry != "trivial":  # a group given as cycles of its own
            found.append(Knowledge("declared group", "a declared symmetry group over words "
                                                     "and actions named in the configuration"))
    if model == "meta_seq2seq" and task in _EPISODES:
        found.append(Knowledge(*_EPISODES[task]))
    if model == "symbol_convolution":
        found.append(Knowledge("declared symmetry: symbols",
                               "symbol convolutions share their weights across every symbol "
                               "of the task's alphabet, a declared permutation symmetry"))
    return found


def knowledge_cell(model: str, task: str | None, config: dict | None,
                   short: bool = False) -> str:
    """A table cell for a results file's recorded configuration: the knowledge it encodes
    (tags when `short`, sentences otherwise), or `LEARNED`. A file that recorded no
    configuration (the earliest toy results) is not guessed at."""
    if config is None:
        return "not recorded"
    found = benchmark_knowledge(model, task, config.get("model_args") or {})
    if not found:
        return LEARNED[short]
    return "; ".join(k.tag if short else f"{k.tag}: {k.what}" for k in found)
