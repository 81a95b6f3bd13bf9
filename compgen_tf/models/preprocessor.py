"""`Seq2SeqPreprocessor`: strings to ids and back, inside the graph (the one vocabulary)."""

from __future__ import annotations

import importlib

import keras
import tensorflow as tf

from compgen_tf.vocabulary import EOS, EOS_ID, PAD, PAD_ID, SOS, SOS_ID, UNK, UNK_ID

# command_grammar -> (the module holding COMMAND_PATTERN, the language as a regular expression
# over single-spaced words; the per-row error of a command outside it). None checks nothing
# beyond the words. Imported when a model uses it, so that `import compgen_tf` stays light.
GRAMMARS = {None: None, "scan": ("tfds_scan.grammar", "not a SCAN command")}


def grammar_check(name):
    """(pattern, error message) of the command grammar `name`."""
    module, message = GRAMMARS[name]
    return importlib.import_module(module).COMMAND_PATTERN, message


@keras.saving.register_keras_serializable(package="compgen_tf")
class Seq2SeqPreprocessor(keras.layers.Layer):
    """Commands and actions to token ids and back, with TensorFlow ops only.

    The same code runs in a `tf.data` pipeline, in `translate` and inside an exported
    SavedModel. Ids follow `compgen_tf.vocabulary`: 0 `<pad>`, 1 `<unk>`, 2 `<sos>`,
    3 `<eos>`, then the words in the given order (`keras.layers.StringLookup` with
    `<pad>` as mask token and `<unk>` as OOV token; an inverted lookup decodes).
    Invalid input never raises here: each row gets an error string instead.

    Args:
        source_words: the command words (no special tokens).
        target_words: the action tokens (no special tokens).
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
        self.source_words, self.target_words = list(source_words), list(target_words)
        self.max_input_length = int(max_input_length)
        self.source_starts_with_sos = bool(source_starts_with_sos)
        self.command_grammar = command_grammar
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

    def encode_commands(self, commands):
        """Commands (string (batch,)) → (ids, error).

        Returns:
            ids: int32 (batch, length), wrapped in `<sos>`/`<eos>` as configured,
                `<pad>` after. A row whose command is invalid is encoded as the
                empty command so that decoding it cannot fail.
            error: string (batch,), empty where the command is valid, else a
                message: empty command, too many words, the unknown words, or (with a
                `command_grammar`) a command outside the language.
        """
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
        unknown_words = _join_words(tf.where(is_unknown, words, ""))
        error = tf.where(tf.reduce_any(is_unknown, axis=1),
                         tf.strings.join(["unknown word(s): ", unknown_words]), "")
        error = tf.where(n_words > self.max_input_length, tf.strings.join([
            "command too long: ", tf.strings.as_string(n_words), " words, the maximum is ",
            str(self.max_input_length)]), error)
        error = tf.where(tf.equal(n_words, 0), "empty command", error)
        if self.command_grammar is not None:
            pattern, message = grammar_check(self.command_grammar)
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
        return ids[:, :tf.reduce_max(eos_at) + 1], error

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
                         tf.strings.join(["unknown action(s): ", unknown]), "")
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

    def dataset_fn(self):
        """A `tf.data` map from a batch of `{"commands", "actions"}` (as the TFDS builders
        give them) to `(source_ids, target_ids)`, what a task model's `fit` reads."""
        def preprocess(example):
            out = self.call(example["commands"], example["actions"])
            return out["source_ids"], out["target_ids"]
        return preprocess

    def get_config(self):
        config = super().get_config()
        config.update({"source_words": self.source_words, "target_words": self.target_words,
                       "max_input_length": self.max_input_length,
                       "source_starts_with_sos": self.source_starts_with_sos,
                       "command_grammar": self.command_grammar})
        return config


def _join_words(words):
    """(batch, length) strings → (batch,): the non-empty ones joined by single spaces."""
    joined = tf.strings.reduce_join(words, axis=1, separator=" ")
    return tf.strings.strip(tf.strings.regex_replace(joined, " +", " "))
