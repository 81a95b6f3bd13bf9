"""The base of the library's backbones: functional Keras models from ids to logits."""

from __future__ import annotations

import functools

import keras
from keras import ops

from compgen_tf.arguments import positive_int
from compgen_tf.tokens import PAD_ID


class Backbone(keras.Model):
    """A functional model from token ids to teacher-forced logits, with its encoder exposed.

    A family's backbone creates its layers, wires them between two `keras.Input`s,
    `source_ids` (batch, source_length) and `target_ids` (batch, target_length), and hands
    the graph to `keras.Model` as a functional model, so that `summary()` lists the layers
    and shapes and `keras.utils.plot_model` draws it. Its output is the teacher-forced
    logits (batch, target_length, target_vocabulary_size).

    Every backbone also offers the two halves that greedy decoding needs, both built from
    the same layers as the graph:

    - `encode(source_ids, training=False)`: the memory the decoder reads (a tuple of
      tensors whose first element has the source length as its second axis);
    - `decoder`: a `compgen_tf.models.recurrent_decoder.RecurrentDecoder` layer.

    `get_config` lists the constructor arguments (not the graph), so `from_config`
    rebuilds the graph by calling the constructor.

    Every backbone takes a `dtype` keyword (a dtype policy or its name, e.g.
    `"mixed_bfloat16"`; None: Keras' global policy): the layers it creates take that
    policy, and `get_config` saves it, so a reloaded backbone computes in the same types.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__init__ = _taking_dtype(cls.__dict__["__init__"])

    def __setattr__(self, name, value):
        # On Keras' torch backend every layer is a torch Module, which refuses a sublayer as
        # an attribute before Module.__init__ has run. A backbone creates its layers before
        # it becomes the functional model (`make_functional`), whose graph then tracks them,
        # so until then they are kept as plain attributes.
        if keras.backend.backend() == "torch" and "_modules" not in self.__dict__:
            object.__setattr__(self, name, value)
        else:
            super().__setattr__(name, value)

    def set_vocabulary_sizes(self, source_vocabulary_size, target_vocabulary_size):
        """Checks and keeps the two vocabulary sizes (special tokens included)."""
        self.source_vocabulary_size = positive_int("source_vocabulary_size",
                                                   source_vocabulary_size)
        self.target_vocabulary_size = positive_int("target_vocabulary_size",
                                                   target_vocabulary_size)

    @staticmethod
    def inputs_spec():
        """The two `keras.Input`s of every backbone."""
        return (keras.Input((None,), dtype="int32", name="source_ids"),
                keras.Input((None,), dtype="int32", name="target_ids"))

    def finish(self, source_ids, target_ids, **kwargs):
        """Wires `encode` and the decoder between the inputs and makes the functional model."""
        logits = self.decoder(target_ids, self.encode(source_ids))
        self.make_functional({"source_ids": source_ids, "target_ids": target_ids}, logits,
                             **kwargs)

    def make_functional(self, inputs, outputs, **kwargs):
        """Initialises this object as the functional model from `inputs` to `outputs`."""
        # A functional model ignores keyword arguments it does not know, so a misspelt
        # architecture argument would pass unnoticed: only a layer's own are taken.
        unknown = sorted(set(kwargs) - {"name", "trainable"})
        if unknown:
            raise TypeError(f"Unrecognized keyword arguments passed to {type(self).__name__}: "
                            f"{unknown}")
        # super(), not keras.Model.__init__: the first call makes Keras insert `Functional`
        # above this class, and later calls must go to it rather than insert it again.
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)

    @staticmethod
    def source_mask(source_ids):
        """True at the non-padding source positions."""
        return ops.not_equal(source_ids, PAD_ID)

    def encode(self, source_ids, training=False):
        """The encoder half: the memory that the decoder reads; each backbone implements it.

        Args:
            source_ids: int (batch, source_length), padded with `<pad>`.
            training: whether dropout is active.

        Returns:
            A tuple of tensors whose first element has the source length as its second axis
            (its other elements are the backbone's own, e.g. the source mask and the
            decoder's initial state).
        """
        raise NotImplementedError

    def get_config(self):
        return {"name": self.name, "trainable": self.trainable,
                "dtype": keras.dtype_policies.serialize(self.dtype_policy)}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _taking_dtype(init):
    """A backbone constructor that takes a `dtype` keyword: the layers it creates take that
    dtype policy, and so does the backbone.

    The families' constructors create their layers without a `dtype` argument, so they take
    Keras' global policy when they are made; the constructor therefore runs with the global
    policy set to `dtype`, and the previous one is restored after it (public API only;
    construction is not thread-safe in that window). Without a `dtype` nothing changes: the
    layers take the global policy, as always, and the backbone records it.
    """
    @functools.wraps(init)
    def __init__(self, *args, dtype=None, **kwargs):
        if getattr(self, "_constructing_dtype", None) is not None:
            init(self, *args, **kwargs)  # a subclass's constructor calling its base's
            return
        previous = keras.config.dtype_policy()
        policy = previous if dtype is None else keras.dtype_policies.get(dtype)
        object.__setattr__(self, "_constructing_dtype", policy)
        keras.config.set_dtype_policy(policy)
        try:
            init(self, *args, **kwargs)
        finally:
            keras.config.set_dtype_policy(previous)
            object.__setattr__(self, "_constructing_dtype", None)
        self.dtype_policy = policy

    return __init__
