"""Step-indexed training batches as `tf.data`: the batch of step s is a pure function of s."""

from __future__ import annotations

import itertools

import numpy as np
import tensorflow as tf

from compgen_tf.training.data import EncodedSplit, epoch_batches, gather_batch
from compgen_tf.tokens import EOS_ID, PAD_ID

_IDS = tf.TensorSpec([None, None], tf.int32)


def pad_to_replicas(source, target, replicas: int):
    """Pads a batch with empty examples up to a multiple of `replicas` rows.

    An empty example is the empty command (`<eos>` alone) with an all-`<pad>` target: it adds
    no loss and no gradient, so each replica gets an equal, non-empty slice (Keras RNNs
    reject zero-row batches) without changing the step.
    """
    missing = -len(source) % replicas
    if not missing:
        return source, target
    empty_source = np.full((missing, source.shape[1]), PAD_ID, source.dtype)
    empty_source[:, 0] = EOS_ID
    empty_target = np.full((missing, target.shape[1]), PAD_ID, target.dtype)
    return np.concatenate([source, empty_source]), np.concatenate([target, empty_target])


class SplitBatches:
    """The batches of a SCAN split, step after step, epoch after epoch.

    Epoch e is `compgen_tf.training.data.epoch_batches(split, batch_size, seed, e)` (shuffled,
    length-bucketed); step s is batch s mod n of epoch s div n, n batches an epoch. So
    the data a step sees depends only on (seed, step), and a run resumed at step s reads
    what an uninterrupted run would.

    Args:
        split: the `EncodedSplit` to train on.
        batch_size: examples per (global) batch.
        seed: the data order's seed.
        length_bucket: padded lengths are rounded up to multiples of this.
    """

    signature = (_IDS, _IDS)
    replicable = True

    def __init__(self, split: EncodedSplit, batch_size: int, seed: int, length_bucket: int = 8):
        self.split, self.batch_size = split, int(batch_size)
        self.seed, self.length_bucket = int(seed), int(length_bucket)
        self._epoch, self._batches = None, None
        self.batches_per_epoch = len(self._epoch_batches(0))

    def _epoch_batches(self, epoch):
        if epoch != self._epoch:
            self._epoch = epoch
            self._batches = epoch_batches(self.split, self.batch_size, self.seed, epoch,
                                          self.length_bucket)
        return self._batches

    def batch(self, step: int):
        """The `(source_ids, target_ids)` of `step`: batch `step mod n` of epoch `step div n`,
        trimmed to a multiple of `length_bucket` (`gather_batch`)."""
        epoch, index = divmod(int(step), self.batches_per_epoch)
        return gather_batch(self.split, self._epoch_batches(epoch)[index], self.length_bucket)


class ArrayBatches:
    """The batches of in-memory arrays (the toy tasks), reshuffled every epoch.

    Epoch e visits the rows in the order `numpy.random.default_rng([seed, e]).permutation`;
    step s is batch s mod n of epoch s div n (the last batch of an epoch may be smaller).

    Args:
        arrays: a tuple of arrays with the same number of rows, e.g. (inputs, targets) or
            (inputs, targets, sample weights), as `fit` reads them.
        batch_size: rows per batch.
        seed: the order's seed.
    """

    replicable = False

    def __init__(self, arrays, batch_size: int, seed: int):
        self.arrays = tuple(np.asarray(a) for a in arrays)
        self.rows = len(self.arrays[0])
        if not self.rows or any(len(a) != self.rows for a in self.arrays):
            raise ValueError("ArrayBatches needs non-empty arrays with the same number of rows")
        self.batch_size, self.seed = int(batch_size), int(seed)
        self.batches_per_epoch = -(-self.rows // self.batch_size)
        self.signature = tuple(tf.TensorSpec((None,) + a.shape[1:], tf.as_dtype(a.dtype))
                               for a in self.arrays)
        self._epoch, self._order = None, None

    def batch(self, step: int):
        """The rows of every array at `step`: batch `step mod n` of epoch `step div n`."""
        epoch, index = divmod(int(step), self.batches_per_epoch)
        if epoch != self._epoch:
            self._epoch = epoch
            self._order = np.random.default_rng([self.seed, epoch]).permutation(self.rows)
        rows = self._order[index * self.batch_size:(index + 1) * self.batch_size]
        return tuple(a[rows] for a in self.arrays)


def training_dataset(stream, start_step: int, strategy=None):
    """The batches of `stream` from `start_step` on, as what `fit` reads.

    With one replica, a `tf.data.Dataset` of whole batches. With several (a `stream` whose
    `replicable` is True, batches `(source, target)`), a distributed dataset in which
    global replica r of every step gets rows [r·k, (r+1)·k) of the step's batch, padded
    with empty examples to a multiple of the replica count: the same slices on every
    worker and every run, so that the replicas' summed gradients are the batch's.
    """
    replicas = strategy.num_replicas_in_sync if strategy is not None else 1
    if replicas == 1:
        return tf.data.Dataset.from_generator(
            lambda: (stream.batch(step) for step in itertools.count(start_step)),
            output_signature=stream.signature).prefetch(2)
    if not stream.replicable:
        raise ValueError(f"{type(stream).__name__} trains on one device only, got a strategy "
                         f"with {replicas} replicas")

    def replica_slices(first_replica, local_replicas):
        for step in itertools.count(start_step):
            source, target = pad_to_replicas(*stream.batch(step), replicas)
            rows = len(source) // replicas
            for replica in range(first_replica, first_replica + local_replicas):
                yield source[replica * rows:(replica + 1) * rows], \
                    target[replica * rows:(replica + 1) * rows]

    def dataset_fn(context):
        local = context.num_replicas_in_sync // context.num_input_pipelines
        first = context.input_pipeline_id * local
        return tf.data.Dataset.from_generator(lambda: replica_slices(first, local),
                                              output_signature=stream.signature)

    options = tf.distribute.InputOptions(experimental_fetch_to_device=False)
    return strategy.distribute_datasets_from_function(dataset_fn, options)
