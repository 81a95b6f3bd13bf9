"""`unrolled_recurrences`: trace the library's recurrences as straight-line code.

XLA on the CPU runs the gradient of a `while_loop` several times slower than the same steps
written out: for one example, a bidirectional LSTM of 200 units over 16 steps takes 9.4 ms
forward and backward as a loop and 2.2 ms unrolled (`benchmarks/batch1_training.py`
measures the whole step). A loop can only be written out when its length is known while the
function is traced, which `TrainStep`'s `training.unroll` arranges: one traced step per
padded shape. Inside this context, the recurrences that read it (`bidirectional_lstm`, the
teacher-forced loop of `RecurrentDecoder`) unroll whenever their length is static, and keep
their loops otherwise. Keras' own `LSTM(unroll=True)` is not used: with padding it gives
other outputs than its loop.
"""

from __future__ import annotations

import contextlib
import threading

_state = threading.local()


@contextlib.contextmanager
def unrolled_recurrences():
    """Within this context, recurrences whose length is known when traced are unrolled."""
    previous = getattr(_state, "active", False)
    _state.active = True
    try:
        yield
    finally:
        _state.active = previous


def static_steps(tensor, axis: int = 1):
    """The length of `tensor` along `axis` when recurrences are to be unrolled and it is
    known while tracing; otherwise None."""
    if not getattr(_state, "active", False):
        return None
    length = tensor.shape[axis]
    return length if isinstance(length, int) else None
