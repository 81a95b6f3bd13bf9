"""Every official SCAN split, regenerated offline from the grammar (no TensorFlow).

Deterministic splits (``addprim_*``, ``filler_*``, ``length``, ``template_*``) are filters
over the commands, listed in the order of the official ``tasks.txt``. Random splits
(``simple``, ``simple_pX``, ``addprim_jump_numN_repR``) use the official choices shipped as
index arrays in ``data/scan_orders.npz`` (written by ``tools/make_orders.py``), and the
maximum-compound-divergence splits (``scan_mcd1..3``) the published files' lines, shipped as
index arrays in ``data/scan_mcd.npz`` (written by ``tools/make_mcd.py``).

Repeated commands. Some train splits repeat commands to give them 10% of the training lines:
``addprim_jump`` has bare ``jump`` 1,467 times, ``addprim_turn_left`` has ``turn left``
2,189 times, and ``addprim_jump_numN_repR`` has bare ``jump`` and each of its N chosen
commands round(1467 / (N + 1)) times each. The official files do not fix where these lines
go, so this package spreads them evenly through the other train lines (which keep tasks.txt
order): extra line j of m sits at relative position (j + 1/2) / m, and the extra lines cycle
through the repeated commands (``jump``, then the chosen commands in the order of
``addprim_jump_additional_examples.json``). A prefix of the train split, or a small shuffle
buffer, thus sees the repeated commands in their intended proportion instead of in one block.

Validation carve. ``"validation"`` is a seeded random subset of train LINE indices (so
copies of a repeated command may fall on both sides); ``"fit"`` is the rest of train. Both
keep official order. ``load_examples`` here and ``tfds_scan.load`` share
``split_line_indices``.
"""

from __future__ import annotations

import functools
import importlib.resources
import numbers
import random
from collections.abc import Callable, Mapping

from tfds_scan import grammar

Example = tuple[str, str]

_BASE_CONFIG_NAMES = (
    "simple",
    "addprim_jump",
    "addprim_turn_left",
    "filler_num0",
    "filler_num1",
    "filler_num2",
    "filler_num3",
    "length",
    "template_around_right",
    "template_jump_around_right",
    "template_opposite_right",
    "template_right",
)
SIZE_PERCENTAGES = (1, 2, 4, 8, 16, 32, 64)
ADDITIONAL_EXAMPLE_COUNTS = (1, 2, 4, 8, 16, 32)
ADDITIONAL_EXAMPLE_REPEATS = (1, 2, 3, 4, 5)

OFFICIAL_CONFIG_NAMES: tuple[str, ...] = (
    _BASE_CONFIG_NAMES
    + tuple(f"simple_p{percent}" for percent in SIZE_PERCENTAGES)
    + tuple(
        f"addprim_jump_num{count}_rep{repeat}"
        for count in ADDITIONAL_EXAMPLE_COUNTS
        for repeat in ADDITIONAL_EXAMPLE_REPEATS
    )
)
"""The configs that reproduce an official SCAN file: the 12 of upstream TFDS ``scan``, then
``simple_pX``, then ``addprim_jump_numN_repR``."""

# add-jump development split -> its held-out phrase (the phrase alone stays in train).
_ADDJUMP_DEV_PHRASES = {"addjump_dev_run": "run", "addjump_dev_walk": "walk",
                        "addjump_dev_look": "look", "addjump_dev_turn_right": "turn right"}
# Length development splits -> (most actions in train, (fewest, most) actions in test).
# length_dev: the length split's shape inside its training data (fit on outputs of at most
# 16 actions, test on 18-22, as the official split fits on at most 22 and tests on 24-48).
# length_dev_unseen_clause: also its clauses. 80% of the official test commands hold a
# clause that no training command has (`V around D thrice`, 24 actions), none of
# length_dev's do; fitting on at most 15 actions leaves `V around D twice` (16) unseen, in
# 74% of the test commands (tools/length_clause_coverage.py).
LENGTH_DEV_SPLITS = {"length_dev": (16, (18, 22)), "length_dev_unseen_clause": (15, (17, 22))}
# Length development splits that hold out a clause instead of cutting at a length -> the
# held-out clause's modifier and repetition. On the official split, `V around D` is seen
# alone and under `twice` and unseen under `thrice`; length_dev_unseen_clause sees it only
# alone, so its training commands do not determine what `twice` does to it (section 8 of
# docs/research/length_generalization.md). length_dev_opposite_thrice repeats the official pattern
# with `opposite`: seen alone and under `twice`, held out under `thrice`. A third value cuts
# at a length as well: length_dev_opposite_thrice_longer trains on the other commands of at
# most 16 actions and tests on the held-out ones of more, so that, as on the official split,
# the test commands are longer than any training command (their counts are unseen too).
LENGTH_DEV_HELD_OUT = {"length_dev_opposite_thrice": ("opposite", "thrice", None),
                       "length_dev_opposite_thrice_longer": ("opposite", "thrice", 16)}
# Around-right development splits -> the held-out (modifier, direction). template_around_right
# holds out `V around right` (V a verb; `turn around right` is in neither side), so that
# `around` is seen only with `left`, and `right` bare and under `opposite`. Inside its
# training file `opposite` can take `around`'s part and `left` `right`'s: held out
# `V opposite left` (and `turn opposite left` dropped), `opposite` is seen only with `right`,
# and `left` bare and under `around`. Holding out `around left` instead would leave `around`
# never seen at all, a harder task than the official one.
AROUND_RIGHT_DEV_HELD_OUT = {"around_right_dev_opposite_left": ("opposite", "left")}
DEV_CONFIG_NAMES: tuple[str, ...] = (tuple(_ADDJUMP_DEV_PHRASES) + tuple(LENGTH_DEV_SPLITS)
                                     + tuple(LENGTH_DEV_HELD_OUT)
                                     + tuple(AROUND_RIGHT_DEV_HELD_OUT))
"""Development splits built from one official training file alone, for design decisions
that must not read that split's test set.

``addjump_dev_X`` (from the ``addprim_jump`` train file) holds out the phrase X (a verb, or
``turn right``) the way ``addprim_jump`` holds out ``jump``. Its train split is the add-jump
train split without any command containing X, plus the bare phrase repeated as often as bare
``jump`` is (1,467 times, spread evenly; the ``jump`` copies stay); its test split is every
add-jump training command that contains X, except X alone, once each in training-file order.

``length_dev`` (from the ``length`` train file): train is every length training command whose
output has at most 16 actions, test every one with 18 to 22 actions (17 is left out, a gap
as between the official 22 and 24), both in training-file order.
``length_dev_unseen_clause``: the same with at most 15 and 17 to 22 (16 left out), so that,
as on the official split, most test commands hold a clause never seen in training.
``length_dev_opposite_thrice`` (from the ``length`` train file): test is every length training
command with a clause ``V opposite D thrice`` (V an action verb, not ``turn``), train every
other one, both in training-file order. As ``V around D thrice`` on the official split, the
held-out clause's modifier is seen alone and under ``twice``, and ``turn opposite D thrice``
is seen.
``length_dev_opposite_thrice_longer``: the same clause held out, and a length cut: train is
every other length training command with at most 16 actions, test every command with the
clause and more than 16 actions (17 to 21), both in training-file order. It has both of the
official split's properties: an unseen ``thrice`` of a seen block, and test outputs longer
than every training output.

``around_right_dev_opposite_left`` (from the ``template_around_right`` train file): test is
every one of its commands with ``V opposite left`` (V an action verb), train every other one
without ``turn opposite left``, both in training-file order; commands with ``turn opposite
left`` are in neither side, as ``turn around right`` is in neither side of the official split.
As ``around`` there, ``opposite`` is seen with one direction only (``right``), and ``left``
is seen bare and under the other modifier (``around``).

No test command of the official split they come from is in either side."""

MCD_CONFIG_NAMES: tuple[str, ...] = ("scan_mcd1", "scan_mcd2", "scan_mcd3")
"""The maximum-compound-divergence splits of Keysers et al. (2020), those of TFDS
``scan/mcd1..3``: 8,365 train and 1,045 test commands each, in the published files' order,
shipped as indices into ``grammar.all_commands()`` in ``data/scan_mcd.npz`` (written by
``tools/make_mcd.py``). Their validation is carved from train as for every SCAN config."""

CONFIG_NAMES: tuple[str, ...] = OFFICIAL_CONFIG_NAMES + DEV_CONFIG_NAMES + MCD_CONFIG_NAMES
"""Every config name: ``OFFICIAL_CONFIG_NAMES``, then ``DEV_CONFIG_NAMES``, then
``MCD_CONFIG_NAMES``."""

SPLIT_NAMES = ("train", "validation", "fit", "test")
"""Splits accepted by ``load`` and ``load_examples``: official ``train`` and ``test``, and
``validation`` / ``fit`` carved from ``train``."""

VALIDATION_CARVES = ("random", "tail")
"""How ``validation`` is carved from ``train``: a seeded random sample of lines, or the last
lines of the official file (see ``split_line_indices``)."""

NUM_ADDPRIM_JUMP_REPEATS = 1_467
NUM_ADDPRIM_TURN_LEFT_REPEATS = 2_189
MAX_TRAIN_ACTION_LENGTH = 22
_SIMPLE_TRAIN_PERCENT = 80
_FILLER_VERBS = {0: (), 1: ("look",), 2: ("look", "walk"), 3: ("look", "walk", "run")}


def _official_files() -> dict[str, dict[str, str]]:
    def pair(pattern: str) -> dict[str, str]:
        return {split: pattern.format(split=split) for split in ("train", "test")}

    files = {
        "simple": pair("simple_split/tasks_{split}_simple.txt"),
        "addprim_jump": pair("add_prim_split/tasks_{split}_addprim_jump.txt"),
        "addprim_turn_left": pair("add_prim_split/tasks_{split}_addprim_turn_left.txt"),
        "length": pair("length_split/tasks_{split}_length.txt"),
    }
    for num in _FILLER_VERBS:
        files[f"filler_num{num}"] = pair(f"filler_split/tasks_{{split}}_filler_num{num}.txt")
    for name in _BASE_CONFIG_NAMES:
        if name.startswith("template_"):
            files[name] = pair(f"template_split/tasks_{{split}}_{name}.txt")
    for percent in SIZE_PERCENTAGES:
        files[f"simple_p{percent}"] = pair(
            f"simple_split/size_variations/tasks_{{split}}_simple_p{percent}.txt"
        )
    for count in ADDITIONAL_EXAMPLE_COUNTS:
        for repeat in ADDITIONAL_EXAMPLE_REPEATS:
            files[f"addprim_jump_num{count}_rep{repeat}"] = pair(
                "add_prim_split/with_additional_examples/"
                f"tasks_{{split}}_addprim_complex_jump_num{count}_rep{repeat}.txt"
            )
    return {name: files[name] for name in OFFICIAL_CONFIG_NAMES}


OFFICIAL_FILES: Mapping[str, Mapping[str, str]] = _official_files()
"""For each official config (``OFFICIAL_CONFIG_NAMES``), ``{"train": path, "test": path}``
of the official SCAN file it reproduces, relative to the root of the official SCAN repository (as in
``fingerprints.tsv``)."""


def _describe(name: str) -> str:
    if name in LENGTH_DEV_SPLITS:
        longest, (low, high) = LENGTH_DEV_SPLITS[name]
        return ("Development split from the length train file: train on outputs of at most "
                f"{longest} actions, test on {low}-{high}.")
    if name in LENGTH_DEV_HELD_OUT:
        modifier, repetition, longest = LENGTH_DEV_HELD_OUT[name]
        clause = f"a clause '<verb> {modifier} <direction> {repetition}' (verb not 'turn')"
        if longest:
            return (f"Development split from the length train file: test on the commands of "
                    f"more than {longest} actions with {clause}, train on the others of at "
                    f"most {longest}.")
        return (f"Development split from the length train file: test on the commands with "
                f"{clause}, train on the others.")
    if name in AROUND_RIGHT_DEV_HELD_OUT:
        modifier, direction = AROUND_RIGHT_DEV_HELD_OUT[name]
        return (f"Development split from the template_around_right train file: test on its "
                f"'<verb> {modifier} {direction}' commands, train on the others (without "
                f"'turn {modifier} {direction}').")
    if name in _ADDJUMP_DEV_PHRASES:
        phrase = _ADDJUMP_DEV_PHRASES[name]
        return (
            f"Development split from the addprim_jump train file: '{phrase}' only bare in train "
            f"(repeated like 'jump'); test: the other train commands with '{phrase}'."
        )
    if name in MCD_CONFIG_NAMES:
        return (f"Maximum compound divergence split {name[-1]} (Keysers et al. 2020; TFDS "
                f"scan/mcd{name[-1]}): train and test alike in words, unlike in compounds.")
    if name.startswith("simple_p"):
        percent = name[len("simple_p") :]
        return f"Random split: {percent}% of commands for training (official size variation)."
    if name.startswith("addprim_jump_num"):
        count, repeat = name[len("addprim_jump_num") :].split("_rep")
        return (
            f"addprim_jump plus {count} compositional jump commands in train "
            f"(official with_additional_examples, draw {repeat})."
        )
    return {
        "simple": "Random 80/20 split of all commands (official order).",
        "addprim_jump": "Train: no 'jump' except the bare primitive; test: every jump command.",
        "addprim_turn_left": "Train: 'turn left' only bare; test: every other 'turn left' command.",
        "filler_num0": "Test: 'jump around right'; train has no '<verb> around right'.",
        "filler_num1": "Test: 'jump around right'; train has 'look around right'.",
        "filler_num2": "Test: 'jump around right'; train has look/walk 'around right'.",
        "filler_num3": "Test: 'jump around right'; train has look/walk/run 'around right'.",
        "length": "Train: action sequences up to 22 tokens; test: 24 tokens or more.",
        "template_around_right": "Test: every '<verb> around right' command.",
        "template_jump_around_right": "Test: every 'jump around right' command.",
        "template_opposite_right": "Test: every '<verb> opposite right' command.",
        "template_right": "Test: every '<verb> right' command.",
    }[name]


CONFIG_DESCRIPTIONS: Mapping[str, str] = {name: _describe(name) for name in CONFIG_NAMES}
"""One-line description of each config."""


# Shipped index arrays -> the maintainer's tool that writes them.
_ORDER_TOOLS = {"scan_orders.npz": "make_orders", "scan_mcd.npz": "make_mcd"}


@functools.lru_cache(maxsize=None)
def _shipped_orders(file_name: str = "scan_orders.npz") -> dict[str, tuple[int, ...]]:
    # numpy is imported here so that importing this module stays cheap.
    import numpy as np

    resource = importlib.resources.files("tfds_scan").joinpath("data").joinpath(file_name)
    with resource.open("rb") as stream, np.load(stream, allow_pickle=False) as arrays:
        stored_sha256 = str(arrays["canonical_sha256"])
        orders = {
            key: tuple(int(index) for index in arrays[key])
            for key in arrays.files
            if key != "canonical_sha256"
        }
    if stored_sha256 != grammar.canonical_order_sha256():
        raise RuntimeError(
            f"tfds_scan/data/{file_name} indexes a different canonical command order than "
            f"tfds_scan.grammar; rerun `python -m tfds_scan.tools.{_ORDER_TOOLS[file_name]}`."
        )
    return orders


def _has_phrase(command: str, phrase: str) -> bool:
    return f" {phrase} " in f" {command} "


def _interleave(base: list[int], extras: list[int]) -> list[int]:
    # Integer form of "extra j goes before base line i when (j+1/2)/m < (i+1/2)/n".
    merged = []
    next_extra = 0
    for position, item in enumerate(base):
        while (
            next_extra < len(extras)
            and (2 * next_extra + 1) * len(base) < (2 * position + 1) * len(extras)
        ):
            merged.append(extras[next_extra])
            next_extra += 1
        merged.append(item)
    merged.extend(extras[next_extra:])
    return merged


def _filter_split(
    is_test: Callable[[str], bool],
    is_dropped: Callable[[str], bool] = lambda command: False,
) -> tuple[list[int], list[int]]:
    commands = grammar.all_commands()
    train, test = [], []
    for index in _shipped_orders()["tasks_order"]:
        command = commands[index]
        if is_dropped(command):
            continue
        (test if is_test(command) else train).append(index)
    return train, test


def _addprim_split(
    primitive: str, phrase: str, repeated: tuple[str, ...], num_repeats: int
) -> tuple[list[int], list[int]]:
    repeated_set = set(repeated)
    train, test = _filter_split(
        is_test=lambda command: _has_phrase(command, phrase),
        is_dropped=lambda command: command == primitive or command in repeated_set,
    )
    index_of = grammar.command_index()
    cycle = [index_of[primitive]] + [index_of[command] for command in repeated]
    return _interleave(train, cycle * num_repeats), test


def _addjump_dev_split(phrase: str) -> tuple[list[int], list[int]]:
    commands = grammar.all_commands()
    add_jump_train = _split_indices("addprim_jump")["train"]
    kept = [index for index in add_jump_train if not _has_phrase(commands[index], phrase)]
    # Only bare jump is repeated there, so these are distinct and in tasks.txt order.
    held_out = [index for index in add_jump_train
                if _has_phrase(commands[index], phrase) and commands[index] != phrase]
    bare = grammar.command_index()[phrase]
    return _interleave(kept, [bare] * NUM_ADDPRIM_JUMP_REPEATS), held_out


def _template_split(dropped_phrases: tuple[str, ...], test_phrases: tuple[str, ...]):
    return _filter_split(
        is_test=lambda command: any(_has_phrase(command, p) for p in test_phrases),
        is_dropped=lambda command: any(_has_phrase(command, p) for p in dropped_phrases),
    )


def _filler_split(num: int) -> tuple[list[int], list[int]]:
    allowed = set(_FILLER_VERBS[num])
    forbidden_fillers = [v for v in ("walk", "look", "run") if v not in allowed]

    def is_dropped(command: str) -> bool:
        if _has_phrase(command, "turn around right"):
            return True
        if _has_phrase(command, "jump around right"):
            return False
        return any(_has_phrase(command, f"{verb} around right") for verb in forbidden_fillers)

    return _filter_split(
        is_test=lambda command: _has_phrase(command, "jump around right"),
        is_dropped=is_dropped,
    )


def _random_split(percent: int) -> tuple[list[int], list[int]]:
    order = list(_shipped_orders()["simple_order"])
    train_size = len(order) * percent // 100
    return order[:train_size], order[train_size:]


@functools.lru_cache(maxsize=None)
def _split_indices(config_name: str) -> dict[str, tuple[int, ...]]:
    verbs = grammar.PRIMITIVE_VERBS
    if config_name == "simple":
        train, test = _random_split(_SIMPLE_TRAIN_PERCENT)
    elif config_name.startswith("simple_p"):
        train, test = _random_split(int(config_name[len("simple_p") :]))
    elif config_name == "addprim_jump":
        train, test = _addprim_split("jump", "jump", (), NUM_ADDPRIM_JUMP_REPEATS)
    elif config_name == "addprim_turn_left":
        train, test = _addprim_split(
            "turn left", "turn left", (), NUM_ADDPRIM_TURN_LEFT_REPEATS
        )
    elif config_name.startswith("addprim_jump_num"):
        count = int(config_name[len("addprim_jump_num") :].split("_rep")[0])
        chosen_indices = _shipped_orders()[f"additional_{config_name[len('addprim_jump_'):]}"]
        chosen = tuple(grammar.all_commands()[index] for index in chosen_indices)
        train, test = _addprim_split(
            "jump", "jump", chosen, round(NUM_ADDPRIM_JUMP_REPEATS / (count + 1))
        )
    elif config_name in LENGTH_DEV_SPLITS:
        actions = grammar.all_actions()
        lengths = {index: len(actions[index].split())
                   for index in _split_indices("length")["train"]}
        longest, (low, high) = LENGTH_DEV_SPLITS[config_name]
        train = [i for i, n in lengths.items() if n <= longest]
        test = [i for i, n in lengths.items() if low <= n <= high]
    elif config_name in LENGTH_DEV_HELD_OUT:
        modifier, repetition, longest = LENGTH_DEV_HELD_OUT[config_name]
        commands, actions = grammar.all_commands(), grammar.all_actions()
        held_out = tuple(f"{verb} {modifier} {direction} {repetition}"
                         for verb in verbs for direction in ("left", "right"))
        length_train = _split_indices("length")["train"]
        holds = {i: any(_has_phrase(commands[i], p) for p in held_out) for i in length_train}
        longer = {i: longest is not None and len(actions[i].split()) > longest
                  for i in length_train}
        train = [i for i in length_train if not holds[i] and not longer[i]]
        test = [i for i in length_train if holds[i] and (longest is None or longer[i])]
    elif config_name in AROUND_RIGHT_DEV_HELD_OUT:
        modifier, direction = AROUND_RIGHT_DEV_HELD_OUT[config_name]
        commands = grammar.all_commands()
        held_out = tuple(f"{verb} {modifier} {direction}" for verb in verbs)
        dropped = f"turn {modifier} {direction}"
        source = _split_indices("template_around_right")["train"]
        kept = [i for i in source if not _has_phrase(commands[i], dropped)]
        holds = {i: any(_has_phrase(commands[i], p) for p in held_out) for i in kept}
        train = [i for i in kept if not holds[i]]
        test = [i for i in kept if holds[i]]
    elif config_name in _ADDJUMP_DEV_PHRASES:
        train, test = _addjump_dev_split(_ADDJUMP_DEV_PHRASES[config_name])
    elif config_name in MCD_CONFIG_NAMES:
        mcd = _shipped_orders("scan_mcd.npz")
        train, test = (mcd[f"{config_name}_{part}"] for part in ("train", "test"))
    elif config_name.startswith("filler_num"):
        train, test = _filler_split(int(config_name[len("filler_num") :]))
    elif config_name == "length":
        actions = grammar.all_actions()
        index_of = grammar.command_index()
        train, test = _filter_split(
            is_test=lambda command: (
                len(actions[index_of[command]].split()) > MAX_TRAIN_ACTION_LENGTH
            )
        )
    elif config_name == "template_around_right":
        train, test = _template_split(
            ("turn around right",), tuple(f"{verb} around right" for verb in verbs)
        )
    elif config_name == "template_jump_around_right":
        train, test = _template_split(("turn around right",), ("jump around right",))
    elif config_name == "template_opposite_right":
        train, test = _template_split(
            ("turn opposite right",), tuple(f"{verb} opposite right" for verb in verbs)
        )
    elif config_name == "template_right":
        train, test = _template_split(
            ("turn right",), tuple(f"{verb} right" for verb in verbs)
        )
    else:  # pragma: no cover - names are validated before this point
        raise AssertionError(config_name)
    return {"train": tuple(train), "test": tuple(test)}


def check_config_name(config_name: str) -> None:
    """Raise a ValueError listing the valid names if ``config_name`` is not a config.

    Args:
        config_name: The name to check.

    Raises:
        ValueError: For an unknown name.

    Example:
        >>> check_config_name("length")
    """
    _check_one_of(config_name, CONFIG_NAMES, "SCAN config", "names")


def split_examples(config_name: str) -> dict[str, list[Example]]:
    """Return the official train and test examples of one SCAN config.

    Args:
        config_name: One of ``CONFIG_NAMES``, e.g. ``"addprim_jump"``.

    Returns:
        ``{"train": [(command, actions), ...], "test": [...]}`` in official order and
        multiplicity (see the module docstring for the order of deterministic splits and of
        repeated commands). The lists are fresh copies.

    Raises:
        ValueError: For an unknown config name.

    Example:
        >>> examples = split_examples("addprim_jump")
        >>> len(examples["train"]), len(examples["test"])
        (14670, 7706)
    """
    check_config_name(config_name)
    commands, actions = grammar.all_commands(), grammar.all_actions()
    return {
        split: [(commands[index], actions[index]) for index in indices]
        for split, indices in _split_indices(config_name).items()
    }


def check_validation_fraction(validation_fraction: float) -> None:
    """Raise a ValueError unless ``0 < validation_fraction < 1``.

    Args:
        validation_fraction: Share of train lines to hold out for validation.

    Raises:
        ValueError: For a non-number, a bool, or a value outside (0, 1).

    Example:
        >>> check_validation_fraction(0.1)
    """
    if (
        isinstance(validation_fraction, bool)
        or not isinstance(validation_fraction, numbers.Real)
        or not 0 < validation_fraction < 1
    ):
        raise ValueError(
            f"validation_fraction must be a number in (0, 1), got {validation_fraction!r}."
        )


def check_split_name(split: str) -> None:
    """Raise a ValueError listing the valid splits if ``split`` is not one of them.

    Args:
        split: The split name to check.

    Raises:
        ValueError: For a name not in ``SPLIT_NAMES``.

    Example:
        >>> check_split_name("fit")
    """
    _check_one_of(split, SPLIT_NAMES, "split", "splits")


def check_validation_carve(validation_carve: str) -> None:
    """Raise a ValueError unless ``validation_carve`` is one of ``VALIDATION_CARVES``.

    Args:
        validation_carve: How validation lines are chosen from train.

    Raises:
        ValueError: For any other value.

    Example:
        >>> check_validation_carve("tail")
    """
    _check_one_of(validation_carve, VALIDATION_CARVES, "validation_carve", "carves")


def _check_one_of(value: str, valid: tuple[str, ...], what: str, plural: str) -> None:
    if value not in valid:
        raise ValueError(f"Unknown {what} {value!r}; valid {plural}: {', '.join(valid)}.")


def split_line_indices(
    num_train_lines: int,
    split: str,
    *,
    validation_fraction: float = 0.1,
    validation_seed: int = 0,
    validation_carve: str = "random",
) -> list[int]:
    """Return which lines of the official train split make up ``split``.

    With ``validation_carve="random"`` the validation lines are the first
    ``round(validation_fraction * num_train_lines)`` of a permutation of
    ``range(num_train_lines)`` drawn by ``random.Random(validation_seed)``. With ``"tail"``
    they are the last that many lines of the official file (``validation_seed`` is unused);
    this is how the Syntactic Attention reference implementation validates. ``fit`` is every
    other line. This is the single implementation of the carve, used by both
    ``load_examples`` and ``tfds_scan.load``.

    Args:
        num_train_lines: Number of lines of the official train split.
        split: ``"train"``, ``"validation"`` or ``"fit"``.
        validation_fraction: Share of train lines held out, in (0, 1).
        validation_seed: Seed of the permutation (``"random"`` carve only).
        validation_carve: ``"random"`` or ``"tail"`` (see above).

    Returns:
        Sorted line indices (so official order is kept).

    Raises:
        ValueError: For a bad split, fraction or carve, or a carve that leaves either side
            empty.

    Example:
        >>> split_line_indices(10, "validation", validation_fraction=0.2)
        [7, 8]
        >>> split_line_indices(10, "validation", validation_fraction=0.2, validation_carve="tail")
        [8, 9]
    """
    check_split_name(split)
    if split == "test":
        raise ValueError("split_line_indices carves the train split; 'test' is not carved.")
    check_validation_fraction(validation_fraction)
    check_validation_carve(validation_carve)
    if split == "train":
        return list(range(num_train_lines))
    num_validation = round(validation_fraction * num_train_lines)
    if not 0 < num_validation < num_train_lines:
        raise ValueError(
            f"validation_fraction={validation_fraction!r} of {num_train_lines} train lines "
            f"gives {num_validation} validation lines; both validation and fit must be "
            "non-empty."
        )
    if validation_carve == "tail":
        validation = set(range(num_train_lines - num_validation, num_train_lines))
    else:
        permutation = list(range(num_train_lines))
        random.Random(validation_seed).shuffle(permutation)
        validation = set(permutation[:num_validation])
    if split == "validation":
        return sorted(validation)
    return [line for line in range(num_train_lines) if line not in validation]


def load_examples(
    name: str,
    split: str = "train",
    *,
    validation_fraction: float = 0.1,
    validation_seed: int = 0,
    validation_carve: str = "random",
) -> list[Example]:
    """Return one split of a SCAN config as Python pairs, without building TFDS files.

    Same contents and order as ``tfds_scan.load`` (see ``split_line_indices``).

    Args:
        name: One of ``CONFIG_NAMES``.
        split: ``"train"``, ``"validation"``, ``"fit"`` or ``"test"``.
        validation_fraction: Share of train lines held out as validation, in (0, 1).
        validation_seed: Seed of the validation carve.
        validation_carve: ``"random"`` or ``"tail"`` (see ``split_line_indices``).

    Returns:
        A list of ``(command, actions)`` pairs in official order.

    Raises:
        ValueError: For an unknown config or split, or a bad validation_fraction.

    Example:
        >>> len(load_examples("simple", "validation"))
        1673
    """
    check_config_name(name)
    check_split_name(split)
    check_validation_fraction(validation_fraction)
    check_validation_carve(validation_carve)
    examples = split_examples(name)
    if split == "test":
        return examples["test"]
    return carved(examples["train"], split, validation_fraction=validation_fraction,
                  validation_seed=validation_seed, validation_carve=validation_carve)


def carved(train, split: str, **carve) -> list:
    """The items of ``train`` (a split's official train lines) that ``split`` ("fit" or
    "validation") keeps, in order: ``split_line_indices`` applied to them. ``carve``: its
    ``validation_*`` arguments."""
    return [train[line] for line in split_line_indices(len(train), split, **carve)]
