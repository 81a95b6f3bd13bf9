"""The SCAN grammar: every command in a canonical order, and its meaning.

SCAN (Lake & Baroni, 2018) has a finite phrase-structure grammar::

    C -> S and S | S after S | S
    S -> V twice | V thrice | V
    V -> D opposite DIR | D around DIR | D DIR | U
    D -> U | turn
    U -> walk | look | run | jump
    DIR -> left | right

It generates exactly 20,910 distinct commands. This module enumerates them in a fixed
canonical order (the order that the shipped index arrays in ``data/`` refer to) and
interprets any command into its official action sequence.
"""

from __future__ import annotations

import functools
import hashlib
import re

PRIMITIVE_VERBS = ("walk", "look", "run", "jump")
DIRECTIONS = ("left", "right")
DIRECTION_MODIFIERS = ("opposite", "around")
REPETITIONS = {"twice": 2, "thrice": 3}
CONJUNCTIONS = ("and", "after")

ACTION_OF_VERB = {
    "walk": "I_WALK",
    "look": "I_LOOK",
    "run": "I_RUN",
    "jump": "I_JUMP",
}
TURN_OF_DIRECTION = {"left": "I_TURN_LEFT", "right": "I_TURN_RIGHT"}
ACTION_TOKENS = tuple(ACTION_OF_VERB.values()) + tuple(TURN_OF_DIRECTION.values())

NUM_COMMANDS = 20_910

_VERBS = PRIMITIVE_VERBS + ("turn",)
_VOCABULARY = frozenset(
    _VERBS + DIRECTIONS + DIRECTION_MODIFIERS + tuple(REPETITIONS) + CONJUNCTIONS
)


def _alternatives(words) -> str:
    return "(?:" + "|".join(words) + ")"


def _command_pattern() -> str:
    verb, direction = _alternatives(PRIMITIVE_VERBS), _alternatives(DIRECTIONS)
    # V -> D opposite DIR | D around DIR | D DIR | U, with D -> U | turn
    phrase = (f"(?:{_alternatives(_VERBS)}(?: {_alternatives(DIRECTION_MODIFIERS)})? "
              f"{direction}|{verb})")
    sentence = f"{phrase}(?: {_alternatives(REPETITIONS)})?"  # S -> V twice | V thrice | V
    return f"{sentence}(?: {_alternatives(CONJUNCTIONS)} {sentence})?"  # C -> S and S | ...


# The whole language as one regular expression over words joined by single spaces: SCAN is
# finite, so it is regular. Written for both Python's `re` and RE2
# (`tf.strings.regex_full_match`), so that an exported model checks commands in its graph.
COMMAND_PATTERN = _command_pattern()


def is_command(text: str) -> bool:
    """Whether ``text`` (words separated by any whitespace) is a SCAN command.

    Example:
        >>> is_command("jump twice after walk left"), is_command("walk after")
        (True, False)
    """
    return re.fullmatch(COMMAND_PATTERN, " ".join(text.split())) is not None


def _verb_phrases() -> list[str]:
    phrases = []
    for verb in _VERBS:
        if verb != "turn":  # a bare "turn" is not a command: it needs a direction
            phrases.append(verb)
        for direction in DIRECTIONS:
            phrases.append(f"{verb} {direction}")
            for modifier in DIRECTION_MODIFIERS:
                phrases.append(f"{verb} {modifier} {direction}")
    return phrases


def _sentences() -> list[str]:
    sentences = []
    for phrase in _verb_phrases():
        sentences.append(phrase)
        for repetition in REPETITIONS:
            sentences.append(f"{phrase} {repetition}")
    return sentences


@functools.lru_cache(maxsize=None)
def all_commands() -> tuple[str, ...]:
    """Return all 20,910 SCAN commands in the canonical order.

    The order is: every single sentence, then every ``S and S``, then every ``S after S``,
    each by nested loops over verbs, directions, modifiers and repetitions.

    Returns:
        A tuple of distinct command strings (words separated by single spaces).

    Example:
        >>> all_commands()[:3]
        ('walk', 'walk twice', 'walk thrice')
    """
    sentences = _sentences()
    commands = list(sentences)
    for conjunction in CONJUNCTIONS:
        for first in sentences:
            for second in sentences:
                commands.append(f"{first} {conjunction} {second}")
    return tuple(commands)


@functools.lru_cache(maxsize=None)
def command_index() -> dict[str, int]:
    """Return the mapping from each command to its position in ``all_commands()``.

    Returns:
        A dict ``{command: canonical index}``.

    Example:
        >>> command_index()["walk twice"]
        1
    """
    return {command: index for index, command in enumerate(all_commands())}


@functools.lru_cache(maxsize=None)
def canonical_order_sha256() -> str:
    """Return the sha256 of the canonical order, to detect stale shipped index arrays.

    Returns:
        Hex digest of ``"\\n".join(all_commands())`` encoded as UTF-8.

    Example:
        >>> len(canonical_order_sha256())
        64
    """
    return hashlib.sha256("\n".join(all_commands()).encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=None)
def all_actions() -> tuple[str, ...]:
    """Return ``interpret(command)`` for every command of ``all_commands()``, same order.

    Returns:
        A tuple of action strings aligned with ``all_commands()``.

    Example:
        >>> all_actions()[1]
        'I_WALK I_WALK'
    """
    return tuple(interpret(command) for command in all_commands())


def interpret(command: str) -> str:
    """Translate a SCAN command into its official action sequence.

    ``x and y`` runs x then y; ``x after y`` runs y then x; ``twice``/``thrice`` repeat;
    ``opposite`` turns twice before acting; ``around`` turns-and-acts four times.

    Args:
        command: A SCAN command, e.g. ``"jump around left twice after walk"``. Runs of
            whitespace between words are tolerated.

    Returns:
        Space-separated action tokens among ``I_WALK I_LOOK I_RUN I_JUMP I_TURN_LEFT
        I_TURN_RIGHT``.

    Raises:
        ValueError: If ``command`` is not a SCAN command; the message names the offending
            word.
        TypeError: If ``command`` is not a string.

    Example:
        >>> interpret("turn left twice after walk opposite right")
        'I_TURN_RIGHT I_TURN_RIGHT I_WALK I_TURN_LEFT I_TURN_LEFT'
    """
    if not isinstance(command, str):
        raise TypeError(f"A SCAN command must be a str, got {type(command).__name__}.")
    words = command.split()
    if not words:
        raise ValueError("An empty string is not a SCAN command.")
    for word in words:
        if word not in _VOCABULARY:
            raise ValueError(
                f"Unknown word {word!r} in {command!r}: SCAN words are "
                f"{', '.join(sorted(_VOCABULARY))}."
            )
    return " ".join(_interpret_command(words, command))


def _interpret_command(words: list[str], command: str) -> list[str]:
    conjunction_positions = [i for i, word in enumerate(words) if word in CONJUNCTIONS]
    if not conjunction_positions:
        return _interpret_sentence(words, command)
    if len(conjunction_positions) > 1:
        extra = words[conjunction_positions[1]]
        raise ValueError(
            f"Unexpected second conjunction {extra!r} in {command!r}: a SCAN command "
            "joins at most two sentences."
        )
    position = conjunction_positions[0]
    conjunction = words[position]
    first, second = words[:position], words[position + 1 :]
    if not first or not second:
        raise ValueError(
            f"Conjunction {conjunction!r} in {command!r} needs a sentence on both sides."
        )
    first_actions = _interpret_sentence(first, command)
    second_actions = _interpret_sentence(second, command)
    if conjunction == "and":
        return first_actions + second_actions
    return second_actions + first_actions


def _interpret_sentence(words: list[str], command: str) -> list[str]:
    repetitions = 1
    if words[-1] in REPETITIONS:
        repetition_word = words[-1]
        repetitions = REPETITIONS[repetition_word]
        words = words[:-1]
        if not words:
            raise ValueError(f"{repetition_word!r} has no verb to repeat in {command!r}.")
    return _interpret_verb_phrase(words, command) * repetitions


def _interpret_verb_phrase(words: list[str], command: str) -> list[str]:
    verb, *rest = words
    if verb not in _VERBS:
        raise ValueError(
            f"Unexpected word {verb!r} in {command!r}: expected a verb "
            f"({', '.join(_VERBS)})."
        )
    act = [] if verb == "turn" else [ACTION_OF_VERB[verb]]
    if not rest:
        if verb == "turn":
            raise ValueError(f"'turn' needs a direction (left or right) in {command!r}.")
        return act
    if len(rest) > 2:
        raise ValueError(f"Unexpected word {rest[2]!r} in {command!r}.")
    *modifiers, direction = rest
    if direction not in DIRECTIONS:
        raise ValueError(
            f"Unexpected word {direction!r} in {command!r}: expected a direction "
            "(left or right)."
        )
    if modifiers and modifiers[0] not in DIRECTION_MODIFIERS:
        raise ValueError(
            f"Unexpected word {modifiers[0]!r} in {command!r}: expected 'opposite' or "
            "'around'."
        )
    turn = TURN_OF_DIRECTION[direction]
    modifier = modifiers[0] if modifiers else None
    if modifier == "opposite":
        return [turn, turn] + act
    if modifier == "around":
        return ([turn] + act) * 4
    return [turn] + act
