"""`tf.distribute` strategies for one training run: `train --strategy {default,mirrored,multi_worker}`.

- `default`: one device (the first GPU if TensorFlow sees one, else the CPU).
- `mirrored`: `MirroredStrategy`, one replica per visible GPU. `cpu_devices=N` splits
  the CPU into N logical devices and mirrors over those instead, which is how the
  strategy is tested on a machine without GPUs.
- `multi_worker`: `MultiWorkerMirroredStrategy` over the cluster that the `TF_CONFIG`
  environment variable describes; every worker runs the same command.

Every strategy sees the same global batches in the same order (the batch order depends only
on the seed); each replica trains on its slice of the global batch, and the gradients of all
replicas are summed before they are clipped and applied, so a step changes the weights as
the same step on one device does.
"""

from __future__ import annotations

import json
import os

from compgen_tf import names

STRATEGIES = names.STRATEGIES  # default, mirrored, multi_worker


class StrategyError(ValueError):
    """A strategy that cannot be set up as asked."""


def make_strategy(name: str = "default", cpu_devices: int | None = None):
    """Creates the strategy `name`; call it before TensorFlow runs any operation.

    Args:
        name: one of `STRATEGIES`.
        cpu_devices: with `mirrored`, split the CPU into this many logical devices and
            mirror over them (ignoring GPUs); for testing without GPUs.
    """
    if name not in STRATEGIES:
        raise StrategyError(f"unknown strategy {name!r}; choose one of {list(STRATEGIES)}")
    if cpu_devices is not None and name != "mirrored":
        raise StrategyError("cpu_devices applies to the mirrored strategy only")
    import tensorflow as tf

    if name == "default":
        return tf.distribute.get_strategy()
    if name == "mirrored":
        if cpu_devices is None:
            return tf.distribute.MirroredStrategy()
        if cpu_devices < 1:
            raise StrategyError(f"cpu_devices must be >= 1, got {cpu_devices}")
        cpu = tf.config.list_physical_devices("CPU")[0]
        try:
            tf.config.set_logical_device_configuration(
                cpu, [tf.config.LogicalDeviceConfiguration() for _ in range(cpu_devices)])
        except RuntimeError as error:
            raise StrategyError("cpu_devices must be set before TensorFlow is initialised "
                                f"(create the strategy first): {error}") from error
        devices = [device.name for device in tf.config.list_logical_devices("CPU")]
        return tf.distribute.MirroredStrategy(devices[:cpu_devices])
    _tf_config()
    return tf.distribute.MultiWorkerMirroredStrategy(
        cluster_resolver=tf.distribute.cluster_resolver.TFConfigClusterResolver())


def _tf_config() -> dict:
    """The parsed, checked TF_CONFIG of this worker."""
    raw = os.environ.get("TF_CONFIG")
    if not raw:
        raise StrategyError(
            "the multi_worker strategy needs the TF_CONFIG environment variable, e.g. "
            "TF_CONFIG='{\"cluster\": {\"worker\": [\"host1:12345\", \"host2:12345\"]}, "
            "\"task\": {\"type\": \"worker\", \"index\": 0}}' on the first worker")
    try:
        config = json.loads(raw)
        workers = config["cluster"]["worker"]
        task = config["task"]
        index = int(task["index"])
    except (ValueError, KeyError, TypeError) as error:
        raise StrategyError(f"TF_CONFIG is not a valid cluster description ({error!r}): "
                            f"{raw}") from error
    if task.get("type") != "worker" or not 0 <= index < len(workers):
        raise StrategyError(f"TF_CONFIG task must be a worker with an index in "
                            f"[0, {len(workers)}), got {task}")
    return config


def worker_index(strategy) -> int:
    """This process's worker index: 0 for the chief and for single-process strategies."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if resolver is None or not resolver.task_type:
        return 0
    return int(resolver.task_id) if resolver.task_type == "worker" else 0


def is_chief(strategy) -> bool:
    """Whether this process writes the run's files (the only one that does)."""
    return worker_index(strategy) == 0


def wait_for_workers(strategy):
    """Blocks until every worker of a multi-worker strategy has called it (a no-op otherwise).

    The chief calls it after evaluating and the other workers after training, so that no
    worker leaves the cluster while another still runs (which TensorFlow reports as a crash).
    """
    import tensorflow as tf

    if isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        from compgen_tf.models.train_step import AUTOGRAPH

        tf.function(lambda: strategy.reduce(
            tf.distribute.ReduceOp.SUM, strategy.run(lambda: tf.constant(1.0)), axis=None),
            autograph=AUTOGRAPH)()


# Far apart, so that replicas' streams (the state's second word counts up by one per draw)
# never meet within a run.
_REPLICA_SEED_STRIDE = 1 << 24


def separate_dropout_streams(strategy, model, restored: bool):
    """Gives every replica its own stream of dropout masks.

    Keras layers draw dropout masks from a seed state that a strategy mirrors like any
    variable, so every replica would draw the same masks: the i-th rows of all replicas'
    slices would share their dropout, which one device never does. This offsets each
    replica's copy of every seed state by its replica id. A checkpoint stores one copy (a
    worker's first): call it again after restoring, with `restored=True`.
    """
    if strategy.num_replicas_in_sync == 1:
        return
    local = list(strategy.extended.worker_devices)
    first_global_id = worker_index(strategy) * len(local)
    for variable in model.non_trainable_variables:
        if "seed_generator_state" not in variable.path:
            continue
        copies = list(getattr(variable.value, "values", [variable.value]))
        first = copies[0].read_value()
        for local_id, copy in enumerate(copies):
            replica = local_id if restored else first_global_id + local_id
            copy.assign(first + _offset(replica, first.dtype))


def _offset(replica: int, dtype):
    import tensorflow as tf

    return tf.constant([0, replica * _REPLICA_SEED_STRIDE], dtype)
