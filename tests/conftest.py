"""Suite-wide collection order: the longest files first.

`make test` runs the suite on two xdist workers with `--dist loadfile` (each file whole on one
worker, for its module fixtures) and `--no-loadscope-reorder`, so files are handed out in the
order collected here. xdist's own order (most tests first) put the few-test, long files last,
where one worker ran the JAX comparisons for minutes while the other had nothing left.
"""

# Per-file wall time of a full suite (`pytest -n 2 --dist loadfile --durations=60`, the top 60
# summed by file, 2026-12-06, beside two trainings): only the order matters, longest first.
LONGEST_FIRST = (
    "test_jax_training.py",    # 519 s: the JAX worker processes (compilation, mostly)
    "test_backends.py",        # 304 s: every layer and backbone on three backends
    "test_every_model.py",     # 180 s
    "test_tune.py",            # 149 s
    "test_syntactic_attention.py",
    "test_results.py",
    "test_distribute.py",
    "test_meta_seq2seq.py",
)


def pytest_collection_modifyitems(config, items):
    rank = {name: position for position, name in enumerate(LONGEST_FIRST)}
    # A stable sort: the files' own test order, and the other files' order, are kept.
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
