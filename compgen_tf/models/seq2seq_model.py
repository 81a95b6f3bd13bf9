"""Base class of the library's sequence-to-sequence models: text in, text out."""

from __future__ import annotations

import importlib
import re

import keras
import tensorflow as tf

from compgen_tf.training.losses import token_cross_entropy
from compgen_tf.training.train_step import TrainStep
from compgen_tf.vocabulary import EOS, EOS_ID, PAD, PAD_ID, SOS, SOS_ID, UNK, UNK_ID, Vocabulary

# command_grammar -> (the module holding COMMAND_PATTERN, the language as a regular expression
# over single-spaced words; the per-row error of a command outside it). None checks nothing
# beyond the words. Imported when a model uses it, so that `import compgen_tf` stays light.
GRAMMARS = {None: None, "scan": ("tfds_scan.grammar", "not a SCAN command")}


def grammar_check(name):
    """(pattern, error message) of the command grammar `name`."""
    module, message = GRAMMARS[name]
    return importlib.import_module(module).COMMAND_PATTERN, message


class Seq2SeqModel(TrainStep, keras.Model):
    """A Keras model that owns its vocabularies and maps command strings to action strings.

    Subclasses implement the network through three methods on integer ids:

    - `compute_logits(source_ids, target_ids, training, teacher_forcing_ratio, seed)`:
      logits (batch, target_length, target_vocabulary) for the target sequence
      `target_ids` (which ends with `<eos>` and is padded with `<pad>`).
    - `greedy_decode(source_ids, max_length)`: ids (batch, max_length), each row
      the argmax tokens up to and including `<eos>`, `<pad>` after it.
    - `attention_weights(source_ids, max_length)` (optional): per-step attention
      over the source positions, for plots.

    The base class turns strings into ids and back with TensorFlow ops only, so
    the same code runs in training, in `translate`, and inside an exported
    SavedModel.

    Args:
        source_words: the command words (no special tokens).
        target_words: the action tokens (no special tokens).
        max_input_length: the longest command, in words, that the model accepts.
        max_output_length: the most tokens, `<eos>` included, that greedy
            decoding emits.
        source_starts_with_sos: whether the encoded command is wrapped as
            `<sos> words <eos>` (otherwise `words <eos>`).
        command_grammar: `"scan"` to refuse commands outside SCAN's language, per
            row, also inside an exported model (`tfds_scan.grammar.COMMAND_PATTERN`); None
            (the default) checks only the words. The SCAN tools build every model with
            `"scan"` (`compgen_tf.registry.build_model`).
        **kwargs: passed to `keras.Model`.
    """

    def __init__(self, source_words, target_words, max_input_length=32, max_output_length=64,
                 source_starts_with_sos=False, command_grammar=None, **kwargs):
        super().__init__(**kwargs)
        if command_grammar not in GRAMMARS:
            raise ValueError(f"command_grammar must be one of {sorted(GRAMMARS, key=str)}, "
                             f"got {command_grammar!r}")
        self.command_grammar = command_grammar
        if int(max_input_length) < 1 or int(max_output_length) < 1:
            raise ValueError("max_input_length and max_output_length must be positive, got "
                             f"{max_input_length} and {max_output_length}")
        self.source_vocabulary = Vocabulary(source_words, name="source")
        self.target_vocabulary = Vocabulary(target_words, name="target")
        self.max_input_length = int(max_input_length)
        self.max_output_length = int(max_output_length)
        self.source_starts_with_sos = bool(source_starts_with_sos)
        # Same index layout as Vocabulary: 0 <pad>, 1 <unk>, 2 <sos>, 3 <eos>, words.
        self.source_lookup = keras.layers.StringLookup(
            vocabulary=[SOS, EOS] + self.source_vocabulary.words, mask_token=PAD,
            oov_token=UNK, output_mode="int", name="source_lookup")
        self._target_tokens = tf.constant(self.target_vocabulary.tokens)
        # <pad>, <unk> and <sos> are never a correct output: rule them out of every prediction.
        self._output_logit_offset = tf.constant(
            [-1e9 if i in (PAD_ID, UNK_ID, SOS_ID) else 0.0
             for i in range(len(self.target_vocabulary))], tf.float32)

    @property
    def source_vocabulary_size(self) -> int:
        return len(self.source_vocabulary)

    @property
    def target_vocabulary_size(self) -> int:
        return len(self.target_vocabulary)

    # ----------------------------------------------------------------- network
    @property
    def backbone(self):
        """The functional network (a `compgen_tf.models.backbone.Backbone`), which a subclass
        sets in its constructor; its weights exist from then on."""
        return self._backbone

    @backbone.setter
    def backbone(self, backbone):
        self._backbone = backbone
        self.built = True

    def compute_logits(self, source_ids, target_ids, training=False, teacher_forcing_ratio=1.0,
                       seed=None):
        """Logits (batch, target_length, target_vocabulary) for the targets `target_ids` (which
        end with `<eos>` and are padded with `<pad>`).

        With a `seed` (a stateless seed, shape (2,)) each row is teacher-forced with
        probability `teacher_forcing_ratio` and otherwise fed its own previous argmax.
        """
        if seed is None or teacher_forcing_ratio >= 1.0:
            return self.backbone({"source_ids": source_ids, "target_ids": target_ids},
                                 training=training)
        teacher_forced = tf.random.stateless_uniform(
            [tf.shape(target_ids)[0]], seed) < teacher_forcing_ratio
        memory = self.backbone.encode(source_ids, training=training)
        return self.backbone.decoder(target_ids, memory, training=training,
                                     teacher_forced=teacher_forced)

    def token_loss(self, data, training=True, seed=None):
        """(summed token cross-entropy, token count) of a `(source_ids, target_ids)` batch:
        what `train_step` (`compgen_tf.training.train_step.TrainStep`) minimises."""
        source_ids, target_ids = data
        logits = self.compute_logits(source_ids, target_ids, training=training,
                                     teacher_forcing_ratio=self.teacher_forcing_ratio, seed=seed)
        return token_cross_entropy(target_ids, logits)

    def greedy_decode(self, source_ids, max_length=None):
        """Greedy decoding: (batch, max_length) int32 ids, `<pad>` after each `<eos>`."""
        return self.greedy_decode_with_attention(source_ids, max_length)[0]

    def attention_weights(self, source_ids, max_length=None):
        """Greedy decoding that also returns the attention (B, max_length, S)."""
        return self.greedy_decode_with_attention(source_ids, max_length)

    def greedy_decode_with_attention(self, source_ids, max_length=None):
        """(decoded ids (B, max_length), attention weights (B, max_length, S)), through the
        library's one sampler (`compgen_tf.decoding.GreedySampler`)."""
        memory = self.backbone.encode(tf.convert_to_tensor(source_ids, tf.int32))
        return self.backbone.decoder.greedy(memory, max_length or self.max_output_length)

    def mask_special_logits(self, logits):
        """Adds -1e9 to the logits of `<pad>`, `<unk>` and `<sos>`."""
        return logits + tf.cast(self._output_logit_offset, logits.dtype)

    def call(self, inputs, training=False):
        source_ids, target_ids = inputs
        return self.compute_logits(source_ids, target_ids, training=training)

    def build(self, input_shape=None):
        # The backbone is functional: its weights exist from construction on.
        self.built = True

    def get_build_config(self):
        return {"input_shape": None}

    def build_from_config(self, config):
        self.build()

    # -------------------------------------------------------------- text <-> ids
    def encode_commands(self, commands):
        """Commands (string tensor, shape (batch,)) → (ids, error).

        Returns:
            ids: int32 (batch, length), wrapped in `<sos>`/`<eos>` as configured,
                `<pad>` after. A row whose command is invalid is encoded as the
                empty command so that decoding it cannot fail.
            error: string (batch,), empty where the command is valid, else a
                message: empty command, too many words, the unknown words, or (with a
                `command_grammar`) a command outside the language.
        """
        commands = tf.convert_to_tensor(commands, dtype=tf.string)
        words = tf.strings.split(tf.strings.strip(commands))
        ids = tf.cast(self.source_lookup(words), tf.int32)
        n_words = words.row_lengths()
        is_unknown = tf.equal(ids, UNK_ID)
        unknown_words = tf.strings.reduce_join(
            tf.ragged.boolean_mask(words, is_unknown), axis=1, separator=" ")
        has_unknown = tf.reduce_any(is_unknown, axis=1)
        is_empty = tf.equal(n_words, 0)
        is_too_long = n_words > self.max_input_length
        error = tf.where(has_unknown, tf.strings.join(["unknown word(s): ", unknown_words]), "")
        error = tf.where(is_too_long, tf.strings.join([
            "command too long: ", tf.strings.as_string(n_words), " words, the maximum is ",
            str(self.max_input_length)]), error)
        error = tf.where(is_empty, "empty command", error)
        if self.command_grammar is not None:
            pattern, message = grammar_check(self.command_grammar)
            sentence = tf.strings.reduce_join(words, axis=1, separator=" ")
            outside = tf.logical_not(tf.strings.regex_full_match(sentence, pattern))
            error = tf.where(tf.equal(error, "") & outside, message, error)
        valid = tf.equal(error, "")
        ids = tf.ragged.boolean_mask(ids, tf.ones_like(ids, tf.bool) & valid[:, None])
        batch = tf.shape(commands)[0]
        pieces = [ids, tf.RaggedTensor.from_tensor(tf.fill([batch, 1], EOS_ID))]
        if self.source_starts_with_sos:
            pieces.insert(0, tf.RaggedTensor.from_tensor(tf.fill([batch, 1], SOS_ID)))
        ids = tf.concat(pieces, axis=1).to_tensor(default_value=PAD_ID)
        return ids, error

    def decode_actions(self, ids):
        """Output ids (batch, length) → (actions, finished).

        `actions` joins the tokens before the first `<eos>` with spaces;
        `finished` tells whether an `<eos>` was emitted at all.
        """
        ids = tf.convert_to_tensor(ids, tf.int32)
        is_eos = tf.equal(ids, EOS_ID)
        before_eos = tf.equal(tf.cumsum(tf.cast(is_eos, tf.int32), axis=1), 0)
        keep = before_eos & tf.not_equal(ids, PAD_ID) & tf.not_equal(ids, SOS_ID)
        tokens = tf.ragged.boolean_mask(tf.gather(self._target_tokens, ids), keep)
        return tf.strings.reduce_join(tokens, axis=1, separator=" "), tf.reduce_any(is_eos, axis=1)

    def encode_actions(self, actions):
        """Action strings → ids (batch, length) ending with `<eos>`, `<pad>` after.

        Python-side: raises `UnknownTokenError` for a token outside the vocabulary.
        """
        rows = [self.target_vocabulary.ids(a) + [EOS_ID] for a in _as_str_list(actions)]
        return _pad_rows(rows)

    def check_commands(self, commands):
        """Raises a clear error for an unknown word, an empty or an over-long command, or one
        outside the model's `command_grammar`."""
        commands = _as_str_list(commands)
        self.source_vocabulary.check_known(commands)
        for command in commands:
            n = len(command.split())
            if n == 0:
                raise ValueError("empty command")
            if n > self.max_input_length:
                raise ValueError(f"command {command!r} has {n} words, the model accepts at most "
                                 f"{self.max_input_length} (max_input_length)")
            if self.command_grammar is not None:
                pattern, message = grammar_check(self.command_grammar)
                if re.fullmatch(pattern, " ".join(command.split())) is None:
                    raise ValueError(f"{message}: {command!r}")

    def translate(self, commands, batch_size=256):
        """Greedy translation of a list of command strings (raises on invalid input)."""
        commands = _as_str_list(commands)
        self.check_commands(commands)
        self.build()
        outputs = []
        for start in range(0, len(commands), batch_size):
            ids, _ = self.encode_commands(commands[start:start + batch_size])
            actions, _ = self.decode_actions(self._greedy_decode_graph(ids))
            outputs.extend(a.decode() for a in actions.numpy())
        return outputs

    @tf.function(reduce_retracing=True)
    def _greedy_decode_graph(self, source_ids):
        return self.greedy_decode(source_ids)

    def serve(self, commands):
        """Strings in, strings out, never raising on bad input: the export signature."""
        self.build()
        ids, error = self.encode_commands(commands)
        return self.serving_outputs(self.greedy_decode(ids), error)

    def serving_outputs(self, output_ids, error):
        """{"actions", "error"} of an export signature from decoded ids and the input errors.

        A translation that never emits `<eos>` becomes an error too; wherever there is an
        error the action string is empty.
        """
        actions, finished = self.decode_actions(output_ids)
        error = tf.where(tf.equal(error, "") & tf.logical_not(finished),
                         f"no <eos> within max_output_length={self.max_output_length} tokens",
                         error)
        actions = tf.where(tf.equal(error, ""), actions, "")
        return {"actions": actions, "error": error}

    def get_config(self):
        config = super().get_config()
        config.update({
            "source_words": self.source_vocabulary.words,
            "target_words": self.target_vocabulary.words,
            "max_input_length": self.max_input_length,
            "max_output_length": self.max_output_length,
            "source_starts_with_sos": self.source_starts_with_sos,
            "command_grammar": self.command_grammar,
        })
        return config


def _as_str_list(texts):
    if isinstance(texts, str):
        raise TypeError("expected a list of strings, got a single string; wrap it in a list")
    return [t.decode() if isinstance(t, bytes) else str(t) for t in texts]


def _pad_rows(rows):
    width = max((len(r) for r in rows), default=0)
    return tf.constant([r + [PAD_ID] * (width - len(r)) for r in rows], dtype=tf.int32,
                       shape=[len(rows), width])
