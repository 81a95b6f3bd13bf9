"""Base class of the library's sequence-to-sequence models: text in, text out."""

from __future__ import annotations

import inspect
import weakref

import keras
import numpy as np
import tensorflow as tf

from compgen_tf.layers import WeightedAutomaton
from compgen_tf.models.backbone import Backbone
from compgen_tf.models.losses import token_cross_entropy
from compgen_tf.models.preprocessor import Seq2SeqPreprocessor, as_str_list
from compgen_tf.models.train_step import AUTOGRAPH, TrainStep, stateless_uniform
from compgen_tf.tokens import EOS_ID, PAD_ID, pad_width

class Seq2SeqModel(TrainStep, keras.Model):
    """The task model of a sequence-to-sequence family: command strings in, action strings out.

    A task is given its parts (keras-hub's `Task` shape): a `backbone` (a
    `compgen_tf.models.backbone.Backbone`: the functional network, `encode` and a `decoder`
    that owns its loop), which holds every architecture argument, and a `preprocessor`
    (a `Seq2SeqPreprocessor`), the model's one vocabulary and the source of its per-command
    errors. This class does the rest once for every family: teacher-forced logits
    (`compute_logits`, with scheduled sampling when given a seed), greedy decoding through
    `compgen_tf.decoding.GreedySampler` (`greedy_decode`, `attention_weights`), training
    through `fit` (`compgen_tf.models.train_step.TrainStep`), and strings to ids and back
    through the preprocessor (TensorFlow ops only, so the same code runs in `tf.data`, in
    `translate` and inside an exported SavedModel).

    `from_words(source_words, target_words, **arguments)` builds the parts from two word
    lists and the family's hyperparameters, and is what the library's own code calls.

    Args:
        backbone: the family's backbone (`backbone_cls`), built for the preprocessor's
            vocabulary sizes.
        preprocessor: a `Seq2SeqPreprocessor`.
        max_output_length: the most tokens, `<eos>` included, that greedy decoding emits.
        length_head: None (the default: the decoder ends each output with `<eos>`), or a
            `compgen_tf.layers.WeightedAutomaton` over the source ids that takes the
            decision of where an output ends away from the decoder: it reads the command
            and predicts its number of output tokens; the decoder is trained without the
            `<eos>` targets (-EOS, Newman et al. 2020) and greedy decoding emits exactly
            the rounded prediction (docs/length_generalization.md). It is a part with its
            own weights, trained apart (`fit_length_head`), and any family can carry one,
            so it is given to the task rather than to one family's backbone.
            `from_words(length_head={...})` builds it from settings
            (`LENGTH_HEAD_DEFAULTS`).
        length_loss_weight: the weight of the head's squared length error in the
            training loss while the head is trainable (default 1).
        **kwargs: passed to `keras.Model` (`name`, `trainable`).

    Example:
        >>> from compgen_tf.models.seq2seq.attention_seq2seq import AttentionSeq2Seq
        >>> from compgen_tf.models.seq2seq.attention_seq2seq_backbone import (
        ...     AttentionSeq2SeqBackbone)
        >>> preprocessor = Seq2SeqPreprocessor(["jump", "twice"], ["I_JUMP"])
        >>> backbone = AttentionSeq2SeqBackbone(preprocessor.source_vocabulary_size,
        ...                                     preprocessor.target_vocabulary_size,
        ...                                     hidden_units=8)
        >>> task = AttentionSeq2Seq(backbone, preprocessor, max_output_length=8)
        >>> task.translate(["jump twice"])  # untrained: some action string
        ['...']
    """

    # The family's backbone class, which `from_words` builds (keras-hub's `backbone_cls`).
    backbone_cls = None
    preprocessor_cls = Seq2SeqPreprocessor

    def __init__(self, backbone, preprocessor, max_output_length=64, length_head=None,
                 length_loss_weight=1.0, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(preprocessor, Seq2SeqPreprocessor):
            raise ValueError(f"preprocessor must be a Seq2SeqPreprocessor, got {preprocessor!r}")
        if not isinstance(backbone, Backbone):
            raise ValueError(f"backbone must be a compgen_tf Backbone, got {backbone!r}")
        if self.backbone_cls is not None and not isinstance(backbone, self.backbone_cls):
            raise ValueError(f"{type(self).__name__} takes a {self.backbone_cls.__name__}, got a "
                             f"{type(backbone).__name__}")
        if isinstance(max_output_length, bool) or int(max_output_length) < 1:
            raise ValueError(f"max_output_length must be positive, got {max_output_length}")
        if length_head is not None and not isinstance(length_head, WeightedAutomaton):
            raise ValueError("length_head must be None or a WeightedAutomaton over the source "
                             f"ids, got {length_head!r}")
        sizes = {"backbone's source": getattr(backbone, "source_vocabulary_size", None),
                 "backbone's target": getattr(backbone, "target_vocabulary_size", None),
                 "length head's source": getattr(length_head, "vocabulary_size", None)}
        for part, size in sizes.items():
            side = part.rsplit(" ", 1)[1]
            expected = getattr(preprocessor, f"{side}_vocabulary_size")
            if size is not None and size != expected:
                raise ValueError(f"the {part} vocabulary has {size} tokens, the preprocessor's "
                                 f"{expected}")
        self.max_output_length = int(max_output_length)
        self.length_loss_weight = _non_negative("length_loss_weight", length_loss_weight)
        # The attributes in this order: the order of the model's weights (that of the
        # optimizer's variables and of a checkpoint) stays that of the library's first models.
        self.preprocessor = preprocessor
        self._has_length_head = length_head is not None
        if length_head is not None:
            if not length_head.built:
                length_head.build((None, None))
            self.length_head = length_head
        self.backbone = backbone

    @classmethod
    def from_words(cls, source_words, target_words, max_input_length=32, max_output_length=64,
                   source_starts_with_sos=False, command_grammar=None, length_head=None,
                   name=None, **arguments):
        """The task with its parts built from two word lists and hyperparameters.

        Args:
            source_words: the command words (no special tokens).
            target_words: the action tokens (no special tokens).
            max_input_length: the longest command, in words, that the model accepts.
            max_output_length: see the constructor.
            source_starts_with_sos: whether the encoded command is wrapped as
                `<sos> words <eos>` (otherwise `words <eos>`).
            command_grammar: `"scan"` to refuse commands outside SCAN's language, per
                row, also inside an exported model (`tfds_scan.grammar.COMMAND_PATTERN`);
                None (the default) checks only the words. The SCAN tools build every model
                with `"scan"` (`compgen_tf.registry.build_model`).
            length_head: None or a dict of the head's settings (`LENGTH_HEAD_DEFAULTS`):
                `state_size` (default 3), `go_backwards` (default true: read right to
                left), `offset_l1` (default 0: an L1 penalty on the automaton's offsets)
                and `loss_weight` (default 1: the weight of the squared length error of
                each command, added to the summed token cross-entropy).
            name: the task's name (Keras' default when None).
            **arguments: the family's architecture arguments (`backbone_cls`), and the
                task's own options (`task_options`, e.g. `MetaSeq2Seq`'s `support_loss`).

        The parts are made in the order preprocessor, length head, backbone: the order in
        which their weights draw from the global seed.
        """
        preprocessor = cls.preprocessor_cls(
            source_words, target_words, max_input_length=max_input_length,
            source_starts_with_sos=source_starts_with_sos, command_grammar=command_grammar,
            name="preprocessor")
        head_args = length_head_arguments(length_head)
        head = None if head_args is None else build_length_head(
            preprocessor.source_vocabulary_size, head_args)
        options = {key: arguments.pop(key) for key in cls.task_options if key in arguments}
        backbone = cls.backbone_from_words(preprocessor, **arguments)
        if name is not None:
            options["name"] = name
        return cls(backbone, preprocessor, max_output_length=max_output_length,
                   length_head=head,
                   length_loss_weight=1.0 if head_args is None else head_args["loss_weight"],
                   **options)

    @classmethod
    def backbone_from_words(cls, preprocessor, **backbone_args):
        """The family's backbone for `preprocessor`'s vocabularies (`from_words`' hook)."""
        return cls.backbone_cls(preprocessor.source_vocabulary_size,
                                preprocessor.target_vocabulary_size, name="backbone",
                                **backbone_args)

    @classmethod
    def model_arguments(cls) -> set[str]:
        """The names of the keyword arguments `from_words` takes (a configuration's
        `model_args`): its own and the backbone's architecture arguments."""
        names = set()
        for klass in cls.__mro__:
            method = klass.__dict__.get("from_words")
            if method is not None:
                names |= _keyword_names(method.__func__)
        names |= _keyword_names(cls.backbone_cls.__init__) | cls.task_options
        return names - {"source_words", "target_words", "source_vocabulary_size",
                        "target_vocabulary_size", "name"} - cls.derived_arguments

    # Backbone arguments that `from_words` works out itself (not a configuration's).
    derived_arguments = frozenset()
    # The constructor's own options that `from_words` passes on (not the backbone's).
    task_options = frozenset()

    def get_config(self):
        config = super().get_config()
        config.update({
            "backbone": keras.saving.serialize_keras_object(self.backbone),
            "preprocessor": keras.saving.serialize_keras_object(self.preprocessor),
            "max_output_length": self.max_output_length,
            "length_head": (keras.saving.serialize_keras_object(self.length_head)
                            if self._has_length_head else None),
            "length_loss_weight": self.length_loss_weight,
        })
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        if "source_words" in config:
            # A model saved before tasks took their parts (compgen_tf 0.2.0) lists every
            # constructor argument flat: `from_words` takes them as they are. The weights
            # keep their paths, so its `.keras` file loads into the new structure.
            trainable = config.pop("trainable", True)
            config.pop("dtype", None)
            model = cls.from_words(**config)
            model.trainable = trainable
            return model
        for key in ("backbone", "preprocessor", "length_head"):
            if isinstance(config.get(key), dict):
                config[key] = keras.saving.deserialize_keras_object(config[key])
        return cls(**config)

    # The preprocessor's settings, read by training, serving and the tools.
    max_input_length = property(
        lambda self: self.preprocessor.max_input_length,
        doc="The longest command, in words, that the preprocessor accepts.")
    command_grammar = property(
        lambda self: self.preprocessor.command_grammar,
        doc='The language commands are checked against (`"scan"`), or None: words only.')
    source_starts_with_sos = property(
        lambda self: self.preprocessor.source_starts_with_sos,
        doc="Whether commands are encoded as `<sos> words <eos>` (else `words <eos>`).")

    @property
    def source_vocabulary_size(self) -> int:
        """The number of source (command) tokens, special tokens included."""
        return self.preprocessor.source_vocabulary_size

    @property
    def target_vocabulary_size(self) -> int:
        """The number of target (action) tokens, special tokens included."""
        return self.preprocessor.target_vocabulary_size

    @property
    def length_head_args(self):
        """None without a length head, else its settings as `from_words` takes them."""
        if not self._has_length_head:
            return None
        head = self.length_head
        l1 = getattr(head.offset_regularizer, "l1", 0.0) if head.offset_regularizer else 0.0
        # The regularizer keeps its factor in float32: the shortest decimal of that float32
        # is the value it was given (1e-3, not 0.0010000000474974513).
        return {"state_size": head.state_size, "go_backwards": head.go_backwards,
                "offset_l1": float(str(np.float32(l1))), "loss_weight": self.length_loss_weight}

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
        teacher_forced = stateless_uniform(
            (keras.ops.shape(target_ids)[0],), seed) < teacher_forcing_ratio
        memory = self.backbone.encode(source_ids, training=training)
        return self.backbone.decoder(target_ids, memory, training=training,
                                     teacher_forced=teacher_forced)

    def token_loss(self, data, training=True, seed=None):
        """(summed token cross-entropy, token count) of a `(source_ids, target_ids)` batch:
        what `train_step` (`compgen_tf.models.train_step.TrainStep`) minimises.

        With a length head the `<eos>` targets are left out and, while the head is trainable,
        its squared error on each command's number of output tokens is added, times its
        `loss_weight` (a frozen head, `fit_length_head`'s, is not run at every step).
        """
        source_ids, target_ids = data
        logits = self.compute_logits(source_ids, target_ids, training=training,
                                     teacher_forcing_ratio=self.teacher_forcing_ratio, seed=seed)
        if not self._has_length_head:
            return token_cross_entropy(target_ids, logits, self.label_smoothing)
        ops = keras.ops
        is_output = ops.logical_and(ops.not_equal(target_ids, PAD_ID),
                                    ops.not_equal(target_ids, EOS_ID))
        summed, tokens = token_cross_entropy(
            ops.where(is_output, target_ids, PAD_ID), logits, self.label_smoothing)
        if not self.length_head.trainable:
            return summed, tokens
        lengths = ops.sum(ops.cast(is_output, "float32"), axis=1)
        error = self.length_head(source_ids) - lengths
        squared = self.length_loss_weight * ops.sum(ops.square(error))
        return summed + ops.cast(squared, summed.dtype), tokens

    def fit_length_head(self, source_ids, lengths, steps=20000, learning_rate=3e-3,
                        batch_size=256, seed=0):
        """Fits the length head alone to the output `lengths` (number of tokens, `<eos>` not
        counted) of the commands `source_ids` (int (n, width)), then freezes it.

        `keras.Model.fit` of the head on mean squared error, Adam with a cosine decay from
        `learning_rate` over `steps` updates, gradients clipped to norm 1, batches of
        `batch_size`. Fitted with the decoder, under the decoder's optimizer and its
        decaying rate, the head's counts stayed about an action off (on `length_dev`, 47–51%
        validation exact match at 3,500–5,000 steps where the decoder alone reaches 100%);
        a count that has to extrapolate needs the precise fit that this schedule gives
        (docs/length_generalization.md, sections 8–9). Returns the head's mean squared error
        on these commands at the end.
        """
        if not self._has_length_head:
            raise ValueError("this model has no length head (length_head=None)")
        keras.utils.set_random_seed(seed)
        head = self.length_head
        head.trainable = True
        inputs = keras.Input((None,), dtype="int32", name="source_ids")
        counter = keras.Model(inputs, head(inputs), name="length_head_fit")
        schedule = keras.optimizers.schedules.CosineDecay(float(learning_rate), int(steps))
        # Not XLA-compiled on TensorFlow: the gradient of the head's loop over an unknown
        # length needs the loop's intermediate states in a TensorList, which XLA refuses.
        # JAX knows every length when it traces, and runs a step that is not jitted op by op.
        counter.compile(optimizer=keras.optimizers.Adam(schedule, global_clipnorm=1.0),
                        loss="mse", jit_compile=keras.backend.backend() == "jax")
        # The batches' order is read off the first pass of a seeded shuffle, once, and the
        # batches are gathered by it: a shuffled dataset reshuffles for every iterator opened
        # on it, and Keras' JAX trainer opens two where TensorFlow's opens one, so the two
        # backends fitted the head on different batches from the same seed.
        count, steps, batch_size = len(lengths), int(steps), int(batch_size)
        order = tf.data.Dataset.range(count).shuffle(count, seed=seed).repeat()
        order = next(iter(order.batch(steps * batch_size))).numpy().reshape(steps, batch_size)
        ids = tf.constant(np.asarray(source_ids, "int32"))
        targets = tf.constant(np.asarray(lengths, "float32"))
        batches = tf.data.Dataset.from_tensor_slices(order.astype("int32")).map(
            lambda rows: (tf.gather(ids, rows), tf.gather(targets, rows)))
        counter.fit(batches, steps_per_epoch=steps, epochs=1, shuffle=False, verbose=0)
        head.trainable = False
        errors = counter.predict(np.asarray(source_ids, "int32"), batch_size=4096, verbose=0)
        return float(np.mean(np.square(errors - np.asarray(lengths, "float32"))))

    def predicted_lengths(self, source_ids):
        """The length head's output lengths (batch,) int32, rounded and clipped to
        [0, max_output_length] (at max_output_length the row gets no `<eos>`, and serving
        reports it)."""
        counts = keras.ops.round(self.length_head(keras.ops.convert_to_tensor(source_ids,
                                                                               "int32")))
        return keras.ops.cast(keras.ops.clip(counts, 0.0, float(self.max_output_length)),
                              "int32")

    def predict_ids(self, data):
        """What `predict` returns for a batch of `source_ids` (or `(source_ids, ...)`): the
        greedy output ids (batch, max_output_length)."""
        return self.greedy_decode(data[0] if isinstance(data, (tuple, list)) else data)

    def greedy_decode(self, source_ids, max_length=None):
        """Greedy decoding: (batch, max_length) int32 ids, `<pad>` after each `<eos>`."""
        source_ids = keras.ops.convert_to_tensor(source_ids, "int32")
        memory = self.backbone.encode(source_ids)
        return self.backbone.decoder.greedy(memory, max_length or self.max_output_length,
                                            return_attention=False,
                                            lengths=self._lengths(source_ids))[0]

    def _lengths(self, source_ids):
        return self.predicted_lengths(source_ids) if self._has_length_head else None

    def attention_weights(self, source_ids, max_length=None):
        """Greedy decoding that also returns the attention (B, max_length, S)."""
        return self.greedy_decode_with_attention(source_ids, max_length)

    def greedy_decode_with_attention(self, source_ids, max_length=None):
        """(decoded ids (B, max_length), attention weights (B, max_length, S)), through the
        library's one sampler (`compgen_tf.decoding.GreedySampler`)."""
        source_ids = keras.ops.convert_to_tensor(source_ids, "int32")
        memory = self.backbone.encode(source_ids)
        return self.backbone.decoder.greedy(memory, max_length or self.max_output_length,
                                            lengths=self._lengths(source_ids))

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
        """Commands (string (batch,)) → (ids, per-row error); see
        `Seq2SeqPreprocessor.encode_commands`."""
        return self.preprocessor.encode_commands(commands)

    def decode_actions(self, ids):
        """Output ids (batch, length) → (actions, finished); see
        `Seq2SeqPreprocessor.decode_actions`."""
        return self.preprocessor.decode_actions(ids)

    def encode_actions(self, actions, check_known=True):
        """Action strings → ids (batch, length) ending with `<eos>`, `<pad>` after (the
        preprocessor's lookup); raises `UnknownTokenError` for a token outside the vocabulary
        (with `check_known=False` it becomes `<unk>`)."""
        actions = as_str_list(actions)
        if check_known:
            self.preprocessor.check_actions(actions)
        return self.preprocessor.encode_actions(tf.constant(actions, tf.string, [len(actions)]))[0]

    def check_commands(self, commands):
        """Raises a clear error for an unknown word, an empty or an over-long command, or one
        outside the model's `command_grammar` (`Seq2SeqPreprocessor.check_commands`)."""
        self.preprocessor.check_commands(commands)

    def translate(self, commands, batch_size=256, return_errors=False):
        """Greedy translation of a list of command strings (raises on invalid input).

        Each row is what the exported `serving_default` signature answers for it
        (`serving_outputs`): a translation that emits no `<eos>` within
        `max_output_length` tokens is the empty string, and its error says so.

        Args:
            commands: the commands, a list of strings.
            batch_size: commands decoded at once.
            return_errors: also return each row's error.

        Returns:
            The action strings, one a command; with `return_errors`, `(actions, errors)`,
            an error being empty for a row translated without one.
        """
        commands = as_str_list(commands)
        self.check_commands(commands)
        self.build()
        actions, errors = [], []
        for start in range(0, len(commands), batch_size):
            ids, error = self.encode_commands(commands[start:start + batch_size])
            rows = output_rows(self.serving_outputs(self._greedy_decode_graph(ids), error))
            actions += rows[0]
            errors += rows[1]
        return (actions, errors) if return_errors else actions

    def _greedy_decode_graph(self, source_ids):
        """`greedy_decode` as one graph for ids of every shape."""
        return graph_for_any_ids(self, "greedy_decode", 1)(source_ids)

    def serve(self, commands):
        """Strings in, strings out, never raising on bad input: the export signature."""
        self.build()
        ids, error = self.encode_commands(commands)
        return self.serving_outputs(self.greedy_decode(ids), error)

    def serving_outputs(self, output_ids, error):
        """{"actions", "error"} of an export signature from decoded ids and the input errors:
        the one way decoded ids become rows, for the exported signatures and `translate`.

        A translation that never emits `<eos>` becomes an error too; wherever there is an
        error the action string is empty.
        """
        actions, finished = self.decode_actions(output_ids)
        error = tf.where(tf.equal(error, "") & tf.logical_not(finished),
                         f"no <eos> within max_output_length={self.max_output_length} tokens",
                         error)
        actions = tf.where(tf.equal(error, ""), actions, "")
        return {"actions": actions, "error": error}


def output_rows(outputs):
    """The rows of a string signature's answer (`serving_outputs`) as Python strings.

    Args:
        outputs: `{"actions", "error"}`, string tensors (batch,).

    Returns:
        (actions, errors): two lists of str, one entry a row.
    """
    return ([a.decode() for a in outputs["actions"].numpy()],
            [e.decode() for e in outputs["error"].numpy()])


LENGTH_HEAD_DEFAULTS = {"state_size": 3, "go_backwards": True, "offset_l1": 0.0,
                        "loss_weight": 1.0}


def length_head_arguments(length_head):
    """The `length_head` argument of `Seq2SeqModel`, checked, with its defaults filled in."""
    if length_head is None:
        return None
    if not isinstance(length_head, dict):
        raise ValueError(f"length_head must be None or a dict, got {length_head!r}")
    unknown = sorted(set(length_head) - set(LENGTH_HEAD_DEFAULTS))
    if unknown:
        raise ValueError(f"length_head has unknown keys {unknown}; known: "
                         f"{sorted(LENGTH_HEAD_DEFAULTS)}")
    args = {**LENGTH_HEAD_DEFAULTS, **length_head}
    for key in ("offset_l1", "loss_weight"):
        value = args[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ValueError(f"length_head {key} must be a number >= 0, got {value!r}")
        args[key] = float(value)
    return args


def build_length_head(source_vocabulary_size, args):
    """The `WeightedAutomaton` length head of settings `args` (`length_head_arguments`),
    built."""
    offset_l1 = args["offset_l1"]
    # float32 whatever the policy: a count of 40 in bfloat16 is only exact to 0.25.
    head = WeightedAutomaton(
        source_vocabulary_size, state_size=args["state_size"],
        go_backwards=args["go_backwards"], padding_id=PAD_ID,
        offset_regularizer=keras.regularizers.L1(offset_l1) if offset_l1 else None,
        dtype="float32", name="length_head")
    head.build((None, None))
    return head


def _non_negative(name, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise ValueError(f"{name} must be a number >= 0, got {value!r}")
    return float(value)


def _keyword_names(function) -> set[str]:
    parameters = inspect.signature(function).parameters.values()
    return {p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            and p.name not in ("self", "cls")}



# Each model's decoding graphs, kept outside the model: a tf.function attribute with an
# input signature would be written into every SavedModel that holds the model.
_GRAPHS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def graph_for_any_ids(model, method_name: str, count: int):
    """`model.<method_name>` as a tf.function of `count` int32 (batch, length) arrays.

    On JAX, `jax.jit` of the method over the model's current variable values and the ids,
    compiled once per shape of the ids, so the ids are padded to a few shapes first
    (`bucketed_ids`); it returns a `tf.Tensor` as the tf.function does, since what reads the
    ids next (the preprocessor, `serving_outputs`) is TensorFlow's.

    Traced once, for every shape: a function traced on the first call's shapes traces
    again at the next length before it relaxes them, and each trace of a decoder costs
    seconds. Traced without AutoGraph (see `AUTOGRAPH`). The function reaches the model
    through a weak reference, so that the cache does not keep the model alive.
    """
    graphs = _GRAPHS.setdefault(model, {})
    if method_name not in graphs and keras.backend.backend() == "jax":
        graphs[method_name] = _jitted_for_any_ids(model, method_name)
    if method_name not in graphs:
        method, owner = getattr(type(model), method_name), weakref.ref(model)
        graphs[method_name] = tf.function(
            lambda *ids: method(owner(), *ids),
            input_signature=[tf.TensorSpec([None, None], tf.int32)] * count,
            autograph=AUTOGRAPH)
    return graphs[method_name]


def _jitted_for_any_ids(model, method_name: str):
    """`graph_for_any_ids` on JAX: the variables' values are arguments of the jitted
    function, not constants of its trace, so it decodes with the weights the model holds
    when it is called (a fit between two calls changes them)."""
    import jax

    method, owner = getattr(type(model), method_name), weakref.ref(model)

    @jax.jit
    def run(values, *ids):
        model = owner()
        with keras.StatelessScope(state_mapping=list(zip(model.variables, values))):
            return method(model, *ids)

    def call(*ids):
        values = [variable.value for variable in owner().variables]
        rows = len(ids[-1])
        output = run(values, *bucketed_ids(ids))
        return tf.nest.map_structure(lambda x: tf.convert_to_tensor(np.asarray(x)[:rows]),
                                     output)

    return call


# Widths are padded to a multiple of this, the rows of the last ids to a power of two.
_WIDTH_BUCKET, _FEWEST_ROWS = 8, 8


def bucketed_ids(ids):
    """`ids` (int32 (rows, width) arrays, the last one the rows being decoded) padded to
    few shapes, for a decoding method that `jax.jit` compiles once per shape: every width
    to a multiple of 8 (`pad_width`), and the last array's rows to a power of two (at
    least 8) with copies of its first row (rows are decoded independently; the copies'
    outputs are dropped).
    """
    out = [pad_width(array, _WIDTH_BUCKET) for array in ids]
    last = out[-1]
    if len(last):
        rows = max(_FEWEST_ROWS, 1 << (len(last) - 1).bit_length())
        out[-1] = np.concatenate([last, np.repeat(last[:1], rows - len(last), axis=0)])
    return out
