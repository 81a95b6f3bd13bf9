"""The Keras constructor arguments every weighted layer here shares, stored and serialized once."""

from __future__ import annotations

import keras

from compgen_tf.arguments import rate

_KINDS = {"initializer": keras.initializers, "regularizer": keras.regularizers,
          "constraint": keras.constraints}


def set_weight_arguments(layer, **arguments) -> None:
    """Stores each `<weight>_initializer`, `_regularizer` or `_constraint` argument on `layer`
    as the Keras object it names (`keras.initializers.get` and the like)."""
    for name, value in arguments.items():
        setattr(layer, name, _KINDS[name.rsplit("_", 1)[1]].get(value))
    layer._weight_arguments = tuple(arguments)


def fresh_initializer(initializer):
    """A new instance of the Keras initializer `initializer`, for one more weight.

    Keras fixes an unseeded random initializer's seed when the instance is made, so one
    instance used for two weights draws the same numbers for both (the first values of a
    larger weight repeat a smaller one's). Each weight gets an instance of its own; a
    rebuilt unseeded one picks a seed of its own. A seeded initializer keeps its seed, and
    with it its draws.
    """
    return initializer.__class__.from_config(initializer.get_config())


def weight_arguments_config(layer) -> dict:
    """The serialized form of what `set_weight_arguments` stored, for `get_config`."""
    return {name: _KINDS[name.rsplit("_", 1)[1]].serialize(getattr(layer, name))
            for name in layer._weight_arguments}


def set_dropout_arguments(cell, dropout, recurrent_dropout, seed) -> None:
    """`dropout`, `recurrent_dropout` and `seed` of a recurrent cell, validated. Only a cell
    with dropout owns a seed state, so that a cell without keeps exactly the variables (and
    checkpoints) it always had."""
    cell.dropout = rate("dropout", dropout)
    cell.recurrent_dropout = rate("recurrent_dropout", recurrent_dropout)
    cell.seed = seed
    if cell.dropout or cell.recurrent_dropout:
        cell.seed_generator = keras.random.SeedGenerator(seed)


def dropout_arguments_config(cell) -> dict:
    """The `dropout`, `recurrent_dropout` and `seed` of `cell`, for its `get_config`."""
    return {"dropout": cell.dropout, "recurrent_dropout": cell.recurrent_dropout,
            "seed": cell.seed}
