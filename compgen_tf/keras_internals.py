"""The only module of the library that reaches into Keras' private code, and why.

Everything else uses Keras' public API (`keras.layers`, `keras.ops`, `keras.metrics`,
`keras.StatelessScope`, `Model.compile` / `metrics` / `train_step` / `test_step`). The two
names here have no public equivalent. Both exist under these names in every Keras release
checked, 3.6.0 to 3.15.1, with TensorFlow 2.21 (`tests/test_keras_internals.py` passed on
3.6.0, 3.8.0, 3.15.0 and 3.15.1, and fails if a release drops or renames either);
`pyproject.toml` says why the pin is narrower than that:

- `DropoutRNNCell`: `keras.layers.RNN` draws a cell's dropout masks once per sequence, and
  clears them after it, only for a cell that is an instance of this mixin
  (`RNN._maybe_config_dropout_masks` tests `isinstance`). Keras exports it under no public
  name, and a look-alike class of our own would fail that test: the masks would never be
  reset between batches.
- `SkipSymbolicBuild`: under a `tf.distribute` strategy, Keras' TensorFlow trainer calls the
  model's `_maybe_symbolic_build` at the start of `fit` / `evaluate`: it draws a first batch
  and all-reduces it with a MEAN over the replicas (which fails for integer ids) to build
  the model and the compiled metrics. Keras offers no public switch for it; a model that is
  built at construction and compiles no loss or metrics has nothing to build, so the mixin
  overrides that method, and `_symbolic_build`, which Keras' JAX trainer calls at the start
  of `fit` to trace the model's `call` on the first batch's inputs (a task model's inputs
  are its batch's first element only, which `call` does not take).
"""

from __future__ import annotations

from keras.src.layers.rnn.dropout_rnn_cell import DropoutRNNCell

__all__ = ["DropoutRNNCell", "SkipSymbolicBuild"]


class SkipSymbolicBuild:
    """A mixin for a `keras.Model` built at construction whose `compile` sets no loss
    or metrics: `fit` and `evaluate` under a strategy build only the optimizer (in the
    strategy's scope, where its slots must be created), never draw a batch to trace."""

    def _maybe_symbolic_build(self, iterator=None, data_batch=None):
        if self.optimizer is not None and not self.optimizer.built:
            with self.distribute_strategy.scope():
                self.optimizer.build(self.trainable_variables)

    # The JAX (and PyTorch) trainers call this one directly, with no strategy.
    def _symbolic_build(self, iterator=None, data_batch=None):
        if self.optimizer is not None and not self.optimizer.built:
            self.optimizer.build(self.trainable_variables)
