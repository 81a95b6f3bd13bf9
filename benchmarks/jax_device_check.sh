#!/bin/bash
# The layers and backbones on JAX on a GPU machine that has no TensorFlow (the device tool):
#   1. the layer tests (run_layer_test for every public layer) under KERAS_BACKEND=jax;
#   2. the cross-backend figures: the every-layer model and each backbone, with the weights
#      tests/backend_worker.py draws, against the same figures made with TensorFlow on the
#      CPU (.devcheck/ref, from `KERAS_BACKEND=tensorflow python tests/backend_worker.py
#      save .devcheck/ref`), and the TensorFlow-saved .keras file loaded on the GPU;
#   3. benchmarks/backbone_fit_step.py: plain `fit` step time of every family.
# keras, namex and optree travel as wheels in .devcheck/whl. Everything lands in $OUT.
set -u
OUT=${OUT:-/tmp/device-check}
mkdir -p "$OUT/worker"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .devcheck/whl/*.whl || exit 3
export PYTHONPATH="/tmp/site:$PWD" KERAS_BACKEND=jax PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv | tee "$OUT/gpu.txt"
python3 -c "import jax, keras; print('jax', jax.__version__, jax.devices(), 'keras', keras.__version__)" \
    | tee -a "$OUT/gpu.txt"

echo "== 1. layer tests"
python3 -m pytest -q -p no:cacheprovider tests/test_layers_keras.py tests/test_stack_lstm_cell.py \
    tests/test_key_value_memory.py > "$OUT/layer_tests.txt" 2>&1
tail -3 "$OUT/layer_tests.txt"

echo "== 2. same weights, same figures as TensorFlow on the CPU"
# float32 matmuls at full precision: JAX's GPU default rounds their inputs to TF32.
for precision in highest default; do
    rm -f "$OUT"/worker/*
    JAX_DEFAULT_MATMUL_PRECISION=$precision python3 tests/backend_worker.py save "$OUT/worker" \
        > "$OUT/worker_$precision.log" 2>&1 || { tail -20 "$OUT/worker_$precision.log"; continue; }
    JAX_DEFAULT_MATMUL_PRECISION=$precision python3 tests/backend_worker.py load "$OUT/worker" \
        .devcheck/ref/tensorflow.keras >> "$OUT/worker_$precision.log" 2>&1
    python3 - "$OUT/worker" .devcheck/ref "$precision" <<'PY' | tee -a "$OUT/cross_backend.txt"
import sys
from pathlib import Path
import numpy as np
gpu, ref, precision = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
pairs = [("every-layer model", "jax.npz", "tensorflow.npz"),
         ("tensorflow.keras loaded on the GPU", "tensorflow_on_jax.npz", "tensorflow.npz"),
         ("backbones", "backbones_jax.npz", "backbones_tensorflow.npz")]
for what, mine, theirs in pairs:
    a, b = np.load(gpu / mine), np.load(ref / theirs)
    assert sorted(a.files) == sorted(b.files), (what, sorted(set(a.files) ^ set(b.files)))
    worst = max(float(np.abs(a[k] - b[k]).max()) for k in b.files)
    print(f"{precision}: {what}: {len(b.files)} arrays, max |GPU jax - CPU tensorflow| = {worst:.2e}")
PY
done

echo "== 3. fit step time"
for batch in ${BATCHES:-32 256}; do
    python3 benchmarks/backbone_fit_step.py --batch $batch --steps ${STEPS:-30} \
        --out "$OUT/backbone_fit_step_jax_gpu_b$batch.json" 2> "$OUT/benchmark_b$batch.log" \
        | python3 -c "import json,sys; r=json.load(sys.stdin); print(r['device'], [(x['family'], x['step_ms'], x['loss_fell']) for x in r['rows']])"
done
