"""`Seq2SeqPreprocessor`: strings to ids and back, inside the graph (the one vocabulary)."""

from __future__ import annotations

import importlib

import keras
import tensorflow as tf

from compgen_tf.tokens import (EOS, EOS_ID, PAD, PAD_ID, SOS, SOS_ID, SPECIAL_TOKENS, UNK,
                               UNK_ID)

# The special tokens and their ids are the preprocessor's layout; they live in
# `compgen_tf.tokens` (which layers may import) and are found here too.
__all__ = ["EOS", "EOS_ID", "PAD", "PAD_ID", "SOS", "SOS_ID", "SPECIAL_TOKENS", "UNK", "UNK_ID",
           "Seq2SeqPreprocessor", "UnknownTokenError", "vocabulary_words"]

# command_grammar -> (the module holding COMMAND_PATTERN, the language as a regular expression
# over single-spaced words; the per-row error of a command outside it). None checks nothing
# beyond the words. Imported when a model uses it, so that `import compgen_tf` stays light.
GRAMMARS = {None: None, "scan": ("tfds_scan.grammar", "not a SCAN command")}

# The beginnings of the per-row errors that list unknown tokens.
UNKNOWN_WORDS, UNKNOWN_ACTIONS = "unknown word(s): ", "unknown action(s): "


class UnknownTokenError(ValueError):
    """Raised when a text holds words that are not in the vocabulary."""


def vocabulary_words(texts) -> list[str]:
    """The distinct whitespace-separated words of `texts`, sorted: the words of a
    vocabulary built from training texts.

    Example:
        >>> vocabulary_words(["walk twice", "jump"])
        ['jump', 'twice', 'walk']
    """
    return sorted({word for text in texts for word in text.split()})


def grammar_check(name):
    """(pattern, error message) of the command grammar `name`."""
    module, message = GRAMMARS[name]
    return importlib.import_module(module).COMMAND_PATTERN, message


@keras.saving.register_keras_serializable(package="compgen_tf")
class Seq2SeqPreprocessor(keras.layers.Layer):
    """Commands and actions to token ids and back, with TensorFlow ops only.

    The same code runs in a `tf.data` pipeline, in `translate` and inside an exported
    SavedModel. It is a model's one vocabulary, and the one source of its per-command
    errors (`check_commands` raises on the Python side what `encode_commands` reports per
    row). Ids follow `compgen_tf.tokens`: 0 `<pad>`, 1 `<unk>`, 2 `<sos>`,
    3 `<eos>`, then the words in the given order (`keras.layers.StringLookup` with
    `<pad>` as mask token and `<unk>` as OOV token; an inverted lookup decodes).
    Invalid input never raises here: each row gets an error string instead.

    Args:
        source_words: the command words (no special tokens). Order is kept; a duplicate,
            a special token or a word with whitespace is a `ValueError`.
        target_words: the action tokens (no special tokens), checked the same way.
        max_input_length: the longest command, in words, that is accepted.
        source_starts_with_sos: encode commands as `<sos> words <eos>` (else `words <eos>`).
        command_grammar: `"scan"` to refuse commands outside SCAN's language
            (`tfds_scan.grammar.COMMAND_PATTERN`); None checks only the words.
        **kwargs: passed to `keras.layers.Layer`.

    Call arguments:
        commands: string (batch,).
        actions: optional string (batch,), the target action sequences.

    Returns:
        {"source_ids" (batch, length) int32, "error" (batch,) string} and, with
        `actions`, "target_ids" (batch, length) int32 (ending with `<eos>`) and
        "target_error" (batch,) string.

    Example:
        >>> preprocessor = Seq2SeqPreprocessor(["jump", "twice"], ["I_JUMP"])
        >>> out = preprocessor(tf.constant(["jump twice", "fly"]),
        ...                    tf.constant(["I_JUMP I_JUMP", "I_JUMP"]))
        >>> out["source_ids"].numpy().tolist(), out["error"].numpy().tolist()
        ([[4, 5, 3], [3, 0, 0]], [b'', b'unknown word(s): fly'])
    """

    def __init__(self, source_words, target_words, max_input_length=32,
                 source_starts_with_sos=False, command_grammar=None, **kwargs):
        super().__init__(**kwargs)
        if command_grammar not in GRAMMARS:
            raise ValueError(f"command_grammar must be one of {sorted(GRAMMARS, key=str)}, "
                             f"got {command_grammar!r}")
        if int(max_input_length) < 1:
            raise ValueError(f"max_input_length must be positive, got {max_input_length}")
        self.source_words = _checked_words("source", source_words)
        self.target_words = _checked_words("target", target_words)
        self._ids = {"source": {t: i for i, t in enumerate(self.source_vocabulary)},
                     "target": {t: i for i, t in enumerate(self.target_vocabulary)}}
        self.max_input_length = int(max_input_length)
        self.source_starts_with_sos = bool(source_starts_with_sos)
        self.command_grammar = command_grammar
        # Imported here, not while a graph is traced: a `tf.data` map traces with AutoGraph,
        # which cannot convert the import machinery and warns on every training run.
        self._grammar = None if command_grammar is None else grammar_check(command_grammar)
        lookup = dict(mask_token=PAD, oov_token=UNK, output_mode="int")
        self.source_lookup = keras.layers.StringLookup(
            vocabulary=[SOS, EOS] + self.source_words, name="source_lookup", **lookup)
        self.target_lookup = keras.layers.StringLookup(
            vocabulary=[SOS, EOS] + self.target_words, name="target_lookup", **lookup)
        self.target_tokens = keras.layers.StringLookup(
            vocabulary=[SOS, EOS] + self.target_words, invert=True, name="target_tokens",
            **lookup)
        # An export tracks the lookup tables that exist when it is written: create them now.
        self.target_lookup(tf.constant([EOS]))
        self.target_tokens(tf.constant([EOS_ID]))
        self.source_lookup(tf.constant([EOS]))

    def call(self, commands, actions=None):
        source_ids, error = self.encode_commands(commands)
        out = {"source_ids": source_ids, "error": error}
        if actions is not None:
            out["target_ids"], out["target_error"] = self.encode_actions(actions)
        return out

    def encode_commands(self, commands, unknown_words="error"):
        """Commands (string (batch,)) → (ids, error).

        Args:
            commands: string (batch,).
            unknown_words: `"error"` (default; serving, SCAN): a word outside the
                vocabulary makes its row invalid; `"unk"` (scoring natural text, whose
                test sentences hold words training never saw): it is encoded as `<unk>`
                and its row stays valid.

        Returns:
            ids: int32 (batch, length), wrapped in `<sos>`/`<eos>` as configured,
                `<pad>` after. A row whose command is invalid is encoded as the
                empty command so that decoding it cannot fail.
            error: string (batch,), empty where the command is valid, else a
                message: empty command, too many words, the unknown words (with
                `unknown_words="error"`), or (with a `command_grammar`) a command
                outside the language.
        """
        if unknown_words not in ("error", "unk"):
            raise ValueError(f"unknown_words must be 'error' or 'unk', got {unknown_words!r}")
        # Dense (batch, words) tensors rather than ragged ones: the ragged ops expand into
        # about a thousand graph ops, which cost a single-command call more than its decoding
        # (serving/README.md, "Latency").
        commands = tf.convert_to_tensor(commands, dtype=tf.string)
        ragged_words = tf.strings.split(tf.strings.strip(commands))
        n_words = tf.cast(ragged_words.row_lengths(), tf.int32)
        words = ragged_words.to_tensor(default_value="")
        in_command = tf.range(tf.shape(words)[1])[None, :] < n_words[:, None]
        ids = tf.where(in_command, tf.cast(self.source_lookup(words), tf.int32), PAD_ID)
        is_unknown = tf.equal(ids, UNK_ID)
        if unknown_words == "error":
            error = tf.where(tf.reduce_any(is_unknown, axis=1),
                             tf.strings.join([UNKNOWN_WORDS, _join_words(
                                 tf.where(is_unknown, words, ""))]), "")
        else:
            error = tf.fill(tf.shape(n_words), "")
        error = tf.where(n_words > self.max_input_length, tf.strings.join([
            "command too long: ", tf.strings.as_string(n_words), " words, the maximum is ",
            str(self.max_input_length)]), error)
        error = tf.where(tf.equal(n_words, 0), "empty command", error)
        if self.command_grammar is not None:
            pattern, message = self._grammar
            outside = tf.logical_not(tf.strings.regex_full_match(_join_words(words), pattern))
            error = tf.where(tf.equal(error, "") & outside, message, error)
        # An invalid row becomes the empty command (`<eos>` alone), so decoding it cannot fail.
        valid = tf.equal(error, "")
        ids = tf.where(valid[:, None], ids, PAD_ID)
        eos_at = tf.where(valid, n_words, 0)
        column = tf.fill([tf.shape(ids)[0], 1], PAD_ID)
        columns = [ids, column]
        if self.source_starts_with_sos:
            columns.insert(0, column + SOS_ID)
            eos_at += 1
        ids = tf.concat(columns, axis=1)
        ids = tf.where(tf.range(tf.shape(ids)[1])[None, :] == eos_at[:, None], EOS_ID, ids)
        # At least one column: the maximum of an empty batch is the lowest int32, and an
        # encoder run over zero steps fails in a graph (its TensorArray of unknown batch
        # cannot be stacked empty), so an empty batch is encoded as (0, 1).
        return ids[:, :tf.maximum(tf.reduce_max(eos_at), 0) + 1], error

    def encode_actions(self, actions):
        """Action strings (batch,) → (ids (batch, length) ending with `<eos>`, `<pad>` after;
        error (batch,): the unknown actions, or "empty actions")."""
        actions = tf.convert_to_tensor(actions, dtype=tf.string)
        tokens = tf.strings.split(tf.strings.strip(actions))
        ids = tf.cast(self.target_lookup(tokens), tf.int32)
        is_unknown = tf.equal(ids, UNK_ID)
        unknown = tf.strings.reduce_join(tf.ragged.boolean_mask(tokens, is_unknown), axis=1,
                                         separator=" ")
        error = tf.where(tf.reduce_any(is_unknown, axis=1),
                         tf.strings.join([UNKNOWN_ACTIONS, unknown]), "")
        error = tf.where(tf.equal(tokens.row_lengths(), 0), "empty actions", error)
        batch = tf.shape(actions)[0]
        ids = tf.concat([ids, tf.RaggedTensor.from_tensor(tf.fill([batch, 1], EOS_ID))], axis=1)
        return ids.to_tensor(default_value=PAD_ID), error

    def decode_actions(self, ids):
        """Output ids (batch, length) → (actions, finished).

        `actions` joins the tokens before the first `<eos>` with spaces; `finished` tells
        whether an `<eos>` was emitted at all.
        """
        ids = tf.convert_to_tensor(ids, tf.int32)
        is_eos = tf.equal(ids, EOS_ID)
        before_eos = tf.equal(tf.cumsum(tf.cast(is_eos, tf.int32), axis=1), 0)
        keep = before_eos & tf.not_equal(ids, PAD_ID) & tf.not_equal(ids, SOS_ID)
        tokens = tf.where(keep, self.target_tokens(ids), "")
        return _join_words(tokens), tf.reduce_any(is_eos, axis=1)

    @property
    def source_vocabulary(self) -> list[str]:
        """Every source token, special tokens first: the token of id i is at index i."""
        return list(SPECIAL_TOKENS) + self.source_words

    @property
    def target_vocabulary(self) -> list[str]:
        """Every target token, special tokens first: the token of id i is at index i."""
        return list(SPECIAL_TOKENS) + self.target_words

    @property
    def source_vocabulary_size(self) -> int:
        """The number of source ids: the special tokens and the command words."""
        return len(SPECIAL_TOKENS) + len(self.source_words)

    @property
    def target_vocabulary_size(self) -> int:
        """The number of target ids: the special tokens and the action tokens."""
        return len(SPECIAL_TOKENS) + len(self.target_words)

    def source_id(self, word) -> int:
        """The id of one source word (a special token included); a `UnknownTokenError` for
        a word outside the vocabulary."""
        return self._id_of("source", word)

    def target_id(self, token) -> int:
        """The id of one target token (a special token included); a `UnknownTokenError` for
        a token outside the vocabulary."""
        return self._id_of("target", token)

    def _id_of(self, side, word) -> int:
        if word not in self._ids[side]:
            known = getattr(self, f"{side}_words")
            raise UnknownTokenError(f"{side} vocabulary has no entry for {[word]}; known "
                                    f"words: {known}")
        return self._ids[side][word]

    def check_commands(self, commands):
        """Raises the first error that `encode_commands` gives a row of `commands` (a list
        of strings): a `UnknownTokenError` naming every unknown word of the list and the
        vocabulary, else a `ValueError` for an empty or over-long command or one outside
        `command_grammar`. The decision is the graph's (`encode_commands`), so the Python
        side and an exported model refuse the same commands."""
        commands = as_str_list(commands)
        _, errors = self.encode_commands(tf.constant(commands, tf.string, [len(commands)]))
        errors = [e.decode() for e in errors.numpy()]
        # The graph's error of a too-long row does not list its unknown words: every word of
        # the list is looked up, so that the message names them all.
        known = self._ids["source"]
        unknown = sorted({word for c in commands for word in c.split() if word not in known})
        if unknown:
            raise UnknownTokenError(f"source vocabulary has no entry for {unknown}; "
                                    f"known words: {self.source_words}")
        for command, error in zip(commands, errors):
            if not error:
                continue
            if error.startswith("command too long"):
                raise ValueError(f"command {command!r} has {len(command.split())} words, the "
                                 f"model accepts at most {self.max_input_length} "
                                 "(max_input_length)")
            if error == "empty command":
                raise ValueError("empty command")
            raise ValueError(f"{error}: {command!r}")

    def check_actions(self, actions):
        """Raises a `UnknownTokenError` naming every action token of `actions` (a list of
        strings) outside the vocabulary, and the vocabulary."""
        actions = as_str_list(actions)
        _, errors = self.encode_actions(tf.constant(actions, tf.string, [len(actions)]))
        unknown = sorted({token for e in errors.numpy() if e.decode().startswith(UNKNOWN_ACTIONS)
                          for token in e.decode()[len(UNKNOWN_ACTIONS):].split()})
        if unknown:
            raise UnknownTokenError(f"target vocabulary has no entry for {unknown}; "
                                    f"known words: {self.target_words}")

    def dataset_fn(self, unknown_words="error"):
        """A `tf.data` map from a batch of `{"commands", "actions"}` (as the TFDS builders
        give them) to `(source_ids, target_ids)`, what a task model's `fit` reads.
        `unknown_words`: as in `encode_commands` (with `"error"` a row holding an unknown
        word is the empty command: check the commands first, as `encode_split` does)."""
        if unknown_words not in ("error", "unk"):
            raise ValueError(f"unknown_words must be 'error' or 'unk', got {unknown_words!r}")

        def preprocess(example):
            source_ids, _ = self.encode_commands(example["commands"], unknown_words)
            target_ids, _ = self.encode_actions(example["actions"])
            return source_ids, target_ids
        return preprocess

    def get_config(self):
        config = super().get_config()
        config.update({"source_words": self.source_words, "target_words": self.target_words,
                       "max_input_length": self.max_input_length,
                       "source_starts_with_sos": self.source_starts_with_sos,
                       "command_grammar": self.command_grammar})
        return config


def as_str_list(texts) -> list[str]:
    """`texts` (strings or bytes) as a list of str; a single string is a `TypeError`."""
    if isinstance(texts, str):
        raise TypeError("expected a list of strings, got a single string; wrap it in a list")
    return [t.decode() if isinstance(t, bytes) else str(t) for t in texts]


def _checked_words(name, words) -> list[str]:
    """`words` as a list, checked: non-empty strings without whitespace, no special token,
    no duplicate (a `ValueError` naming the side and the word)."""
    words, seen = list(words), set()
    for word in words:
        if not isinstance(word, str) or not word or word.split() != [word]:
            raise ValueError(f"{name}: a vocabulary word must be a non-empty string "
                             f"without whitespace, got {word!r}")
        if word in SPECIAL_TOKENS:
            raise ValueError(f"{name}: {word!r} is reserved and added automatically")
        if word in seen:
            raise ValueError(f"{name}: duplicate word {word!r}")
        seen.add(word)
    return words


def _join_words(words):
    """(batch, length) strings → (batch,): the non-empty ones joined by single spaces."""
    joined = tf.strings.reduce_join(words, axis=1, separator=" ")
    return tf.strings.strip(tf.strings.regex_replace(joined, " +", " "))
