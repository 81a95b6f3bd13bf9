# Entry points, each installing what it needs into ./.venv:
#   make train   trains the default model on its default split
#   make test    runs the test suite
#   make docs    writes the API reference into build/docs/ (refused while a public name has no docstring)
VENV ?= .venv
PYTHON ?= python3
PY := $(VENV)/bin/python
MODEL ?= syntactic_attention
TRAIN_ARGS ?=

.PHONY: install train test docs benchmark clean

$(VENV)/.installed: pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -c requirements.lock -e ".[cpu,test,backends,docs]"
	touch $@

install: $(VENV)/.installed

train: install
	$(PY) -m compgen_tf.train --model $(MODEL) $(TRAIN_ARGS)

# Two workers, one TensorFlow thread each (subprocesses inherit it): on two cores, TF's
# default pools of a thread per core in each worker oversubscribe them (one thread took
# 0.95 of the default's time: results/benchmarks/suite_threads.json).
# Files in tests/conftest.py's order, longest first (--no-loadscope-reorder keeps it).
test: install
	TF_NUM_INTRAOP_THREADS=1 TF_NUM_INTEROP_THREADS=1 OMP_NUM_THREADS=1 \
		$(PY) -m pytest -q -n 2 --dist loadfile --no-loadscope-reorder --durations=15 tests

# HTML from the docstrings of every public module of compgen_tf and tfds_scan, offline.
docs: install
	rm -rf build/docs
	$(PY) tools/api_docs.py --out build/docs compgen_tf tfds_scan

benchmark: install
	$(PY) benchmarks/seq2seq_speed.py
	$(PY) benchmarks/meta_seq2seq_speed.py
	$(PY) benchmarks/equivariant_layers_speed.py

clean:
	rm -rf $(VENV) runs
