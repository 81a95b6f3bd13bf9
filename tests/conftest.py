"""Suite-wide settings.

`make test` runs two workers, each taking whole modules (`--dist loadfile`) in the order
collected (`--no-loadscope-reorder`). A slow module taken last leaves the other worker idle
for its length, so the slowest modules, measured with `pytest --durations=0`, go first.
"""

SLOWEST_MODULES_FIRST = ["test_backends.py", "test_syntactic_attention.py",
                         "test_every_model.py", "test_meta_seq2seq.py", "test_tune.py",
                         "test_distribute.py"]


def pytest_collection_modifyitems(config, items):
    rank = {name: position for position, name in enumerate(SLOWEST_MODULES_FIRST)}
    # A stable sort: every other module keeps its place, after these.
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))
