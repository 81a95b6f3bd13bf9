"""The public layers on JAX and PyTorch as well as TensorFlow.

JAX and PyTorch each run in their own process (a process holds one Keras backend; the suite's
is TensorFlow): the layer test files again (`run_layer_test` for every layer: config, build,
call, fit, saving, mixed precision), then the cross-backend checks: the same weights give the
same outputs on every backend, a `.keras` file saved on one backend loads on the others with
those outputs, and every seq2seq family's backbone gives the same logits and loss gradients on
every backend. The equivariance tests run on TensorFlow only: a layer whose outputs equal
TensorFlow's to 1e-5 on the same weights is as equivariant as it is there. A backend that is
not installed (the `backends` extra) is skipped.
"""

import atexit
import functools
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

TESTS = Path(__file__).resolve().parent
BACKENDS = ["tensorflow", "jax", "torch"]
OTHER_BACKENDS = BACKENDS[1:]
LAYER_TEST_FILES = ["test_layers_keras.py", "test_stack_lstm_cell.py",
                    "test_key_value_memory.py", "test_masked_attention.py",
                    "test_transformer_layers.py"]
# float32 on three kernels libraries: outputs agree to rounding, far below any real difference.
TOLERANCE = 1e-5


def installed(backend: str) -> bool:
    return importlib.util.find_spec(backend) is not None


def needs(backend):
    return pytest.mark.skipif(not installed(backend),
                              reason=f"{backend} is not installed (pip install -e '.[backends]')")


# What is compared here is outputs, not speed: without XLA's costly CPU optimizations,
# JAX compiles the layers' scans and steps in about two thirds of the time.
FAST_XLA = "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true"


# Compiling is most of a JAX worker's time, and the suite's JAX processes compile many
# programs more than once: the resume check runs one model three times, a saved model's
# functions compile again when it is loaded. One compilation cache per test process, shared
# by its JAX workers and removed at its end, compiles each program once (the resume check:
# 30 s of CPU instead of 50, the same result file). A cached program is the same executable,
# so no figure depends on it.
@functools.cache
def jax_cache() -> str:
    folder = tempfile.mkdtemp(prefix="compgen_tf_jax_cache_")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def run_on(backend: str, args, timeout=600):
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3",
               CUDA_VISIBLE_DEVICES="", JAX_PLATFORMS="cpu",
               XLA_FLAGS=f"{os.environ.get('XLA_FLAGS', '')} {FAST_XLA}".strip())
    if backend == "jax":
        env.update(JAX_COMPILATION_CACHE_DIR=jax_cache(),
                   JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS="0",
                   JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES="-1")
    result = subprocess.run([sys.executable, *args], env=env, cwd=TESTS.parent,
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, f"{backend}: {args}\n{result.stdout[-3000:]}\n" \
                                   f"{result.stderr[-3000:]}"
    return result.stdout


@pytest.mark.parametrize("backend", [pytest.param(b, marks=needs(b)) for b in OTHER_BACKENDS])
def test_layer_tests_pass_on(backend):
    out = run_on(backend, ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           *[str(TESTS / f) for f in LAYER_TEST_FILES]])
    last = out.strip().splitlines()[-1]
    assert " passed" in last and "failed" not in last and "error" not in last, last


ALL_BACKENDS = pytest.mark.skipif(not all(map(installed, BACKENDS)),
                                  reason="needs tensorflow, jax and torch")


def run_worker(backend: str, args):
    """`backend_worker.py ARGS` on `backend`: TensorFlow's side in this process (the suite's
    own backend, which spares two imports of TensorFlow), the others in their own."""
    if backend == "tensorflow":
        import keras

        import backend_worker

        assert keras.backend.backend() == "tensorflow"
        backend_worker.main(args)
    else:
        run_on(backend, [str(TESTS / "backend_worker.py"), *args])


@pytest.fixture(scope="module")
def saved_on_every_backend(tmp_path_factory):
    """The every-layer model and the backbones' figures of each backend, and each backend's
    `.keras` file loaded on the two others: each backend loads the files saved before it
    where it saves its own, then loads the ones saved after it."""
    out = tmp_path_factory.mktemp("backends")
    saved = []
    for backend in BACKENDS:
        run_worker(backend, ["save", str(out), *saved])
        saved.append(str(out / f"{backend}.keras"))
    for position, backend in enumerate(BACKENDS[:-1]):
        run_worker(backend, ["load", str(out), *saved[position + 1:]])
    return out


@ALL_BACKENDS
def test_same_weights_same_outputs_and_keras_files_load_across_backends(saved_on_every_backend):
    tmp_path = saved_on_every_backend
    reference = np.load(tmp_path / "tensorflow.npz")
    assert len(reference.files) == 7
    for saved_on in BACKENDS:
        saved = np.load(tmp_path / f"{saved_on}.npz")
        for name in reference.files:
            np.testing.assert_allclose(saved[name], reference[name], atol=TOLERANCE, rtol=0,
                                       err_msg=f"{name} on {saved_on} vs tensorflow")
        for loaded_on in BACKENDS:
            if loaded_on == saved_on:
                continue
            loaded = np.load(tmp_path / f"{saved_on}_on_{loaded_on}.npz")
            for name in reference.files:
                np.testing.assert_allclose(loaded[name], saved[name], atol=TOLERANCE, rtol=0,
                                           err_msg=f"{name}: saved on {saved_on}, "
                                                   f"loaded on {loaded_on}")


@ALL_BACKENDS
def test_backbones_give_the_same_logits_and_gradients_on_every_backend(saved_on_every_backend):
    # The decoders' teacher-forced loop is a while_loop on TensorFlow and PyTorch and a scan
    # on JAX (whose while_loop has no gradient): equal gradients show both loops are the same.
    reference = np.load(saved_on_every_backend / "backbones_tensorflow.npz")
    families = {name.split("_logits")[0] for name in reference.files if "_logits" in name}
    assert families == {"seq2seq", "seq2seq_count_options", "syntactic_attention",
                        "syntactic_attention_boundary_options", "equivariant", "meta_seq2seq",
                        "transformer"}
    assert all(any(n.startswith(f"{f}_gradient:") for n in reference.files) for f in families)
    for backend in OTHER_BACKENDS:
        other = np.load(saved_on_every_backend / f"backbones_{backend}.npz")
        assert sorted(other.files) == sorted(reference.files)
        for name in reference.files:
            np.testing.assert_allclose(other[name], reference[name], atol=TOLERANCE, rtol=0,
                                       err_msg=f"{name} on {backend} vs tensorflow")
