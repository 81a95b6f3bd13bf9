"""Suite-wide collection order: the slowest files first.

`make test` runs the files on two workers (`-n 2 --dist loadfile`), which take them in
collection order. A long file taken last leaves the other worker idle until it ends, so the
files that take a minute or more (measured with `--durations`) are collected first; the rest
keep their order.
"""

SLOWEST_FIRST = ("test_backends.py", "test_distribute.py", "test_every_model.py",
                 "test_meta_seq2seq.py", "test_tune.py", "test_results.py", "test_mt.py",
                 "test_registry.py", "test_syntactic_attention.py", "test_pipeline.py")


def pytest_collection_modifyitems(session, config, items):
    def rank(item):
        name = item.path.name
        return SLOWEST_FIRST.index(name) if name in SLOWEST_FIRST else len(SLOWEST_FIRST)

    items.sort(key=rank)  # stable: the order within a file, and of the others, is kept
