"""What one greedy decoding step of a batch-1 LSTM costs under XLA on this CPU, and why.

    python benchmarks/lstm_step_matvec.py [--units 64 400] [--steps 28] [--calls 300]
        [--out results/benchmarks/lstm_step_matvec.json]

Syntactic Attention's single-command latency (serving/README.md, "Latency") is dominated
by its decoder: an LSTM of 400 units whose recurrent kernel (400 x 1,600 floats, 2.5 MB)
is read once per output token. This script times that step alone, as an XLA-compiled
`while_loop` of batch 1, and reports its cost per step as (time of `steps` steps - time of
one step) / (steps - 1), the median over `calls` calls, so that the call's fixed cost
cancels. Each XLA flag set runs in a process of its own (XLA reads `XLA_FLAGS` once), and
the same matrix-vector product is timed with NumPy's BLAS on one thread and on every core,
as the reference of what the hardware does. Kernel layouts timed:

- `float32`: one (units, 4 units) kernel, as `keras.layers.LSTMCell` keeps it;
- `float32_halves`: the kernel as two column halves, two independent products per step
  (would XLA run them on two cores, each half in its own core's L2 cache?);
- `float16_kernel`: the kernel stored in float16 and converted at every step (half the
  bytes to read; the arithmetic stays float32).

Prints one JSON line (and writes it to `--out`): microseconds per step per flag set and
layout, and NumPy's microseconds per product.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchmark_output import emit  # noqa: E402

FLAG_SETS = (
    "",
    "--xla_cpu_use_thunk_runtime=false",
    "--xla_cpu_multi_thread_eigen=false",
    "--xla_cpu_use_xnnpack=true",
    "--xla_cpu_use_onednn=true",
    "--xla_cpu_enable_concurrency_optimized_scheduler=true",
)
LAYOUTS = ("float32", "float32_halves", "float16_kernel")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def median_call_ms(function, *args, calls):
    import numpy as np

    for _ in range(50):
        function(*args)
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        function(*args).numpy()
        times.append(time.perf_counter() - start)
    return 1000.0 * float(np.median(times))


def time_xla_steps(units: int, steps: int, calls: int) -> dict:
    """Microseconds per LSTM step, per kernel layout, in this process's XLA."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf

    kernel = tf.random.stateless_normal([units, 4 * units], seed=[0, 1]) * 0.05
    half = 2 * units
    matvecs = {
        "float32": (lambda weights: lambda h: tf.matmul(h, weights[0]), [kernel]),
        "float32_halves": (lambda weights: lambda h: tf.concat(
            [tf.matmul(h, weights[0]), tf.matmul(h, weights[1])], -1),
            [kernel[:, :half], kernel[:, half:]]),
        "float16_kernel": (lambda weights: lambda h: tf.matmul(
            h, tf.cast(weights[0], tf.float32)), [tf.cast(kernel, tf.float16)]),
    }
    h0 = tf.random.stateless_normal([1, units], seed=[0, 2]) * 0.5
    per_step = {}
    for layout, (make, tensors) in matvecs.items():
        matvec = make([tf.Variable(tensor) for tensor in tensors])

        def run(h, count, matvec=matvec):
            def body(i, h, c):
                z_i, z_f, z_c, z_o = tf.split(matvec(h), 4, axis=-1)
                c = tf.sigmoid(z_f) * c + tf.sigmoid(z_i) * tf.tanh(z_c)
                return i + 1, tf.sigmoid(z_o) * tf.tanh(c), c

            return tf.while_loop(lambda i, h, c: i < count, body, (tf.constant(0), h, h))[1]

        compiled = tf.function(run, jit_compile=True)
        one = median_call_ms(compiled, h0, tf.constant(1), calls=calls)
        many = median_call_ms(compiled, h0, tf.constant(steps), calls=calls)
        per_step[layout] = round(1000.0 * (many - one) / (steps - 1), 1)
    return per_step


def time_numpy_matvec(units: int, calls: int) -> float:
    import numpy as np

    rng = np.random.default_rng(0)
    kernel = rng.standard_normal((units, 4 * units), dtype=np.float32)
    h = rng.standard_normal((1, units), dtype=np.float32)
    for _ in range(200):
        h @ kernel
    start = time.perf_counter()
    for _ in range(calls * 10):
        h @ kernel
    return round(1e6 * (time.perf_counter() - start) / (calls * 10), 1)


def child(args) -> None:
    """One measurement in this process (its environment already set by the parent)."""
    if args.child == "xla":
        result = {str(units): time_xla_steps(units, args.steps, args.calls)
                  for units in args.units}
    else:
        result = {str(units): time_numpy_matvec(units, args.calls) for units in args.units}
    print(json.dumps(result))


def run_child(kind: str, args, environment: dict) -> dict:
    command = [sys.executable, __file__, "--child", kind, "--steps", str(args.steps),
               "--calls", str(args.calls), "--units", *map(str, args.units)]
    completed = subprocess.run(command, env={**os.environ, **environment},
                               capture_output=True, text=True, check=True)
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--units", type=int, nargs="+", default=[64, 400])
    parser.add_argument("--steps", type=int, default=28)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--out")
    parser.add_argument("--child", choices=("xla", "numpy"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.steps < 2:
        parser.error("--steps must be at least 2 (the cost per step is a difference)")
    if args.child:
        child(args)
        return 0
    xla = {flags or "(default)": run_child("xla", args, {"XLA_FLAGS": flags})
           for flags in FLAG_SETS}
    numpy_one_thread = run_child("numpy", args, {name: "1" for name in THREAD_VARIABLES})
    numpy_all_threads = run_child("numpy", args, {})
    import tensorflow as tf

    emit({
        "benchmark": "lstm_step_matvec",
        "command": "python benchmarks/lstm_step_matvec.py " + " ".join(
            sys.argv[1:] if argv is None else argv),
        "cpu_count": os.cpu_count(), "tensorflow": tf.__version__,
        "steps": args.steps, "calls": args.calls,
        "xla_us_per_step": xla,
        "numpy_us_per_matvec": {"one_thread": numpy_one_thread,
                                "all_threads": numpy_all_threads},
    }, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
