"""`python -m compgen_tf.train`: the `train` command as a module of its own (`make train`).

The command is `compgen_tf.cli.train` (also `python -m compgen_tf train`); this module keeps
the form `python -m compgen_tf.train --model syntactic_attention` working, with
TensorFlow's log lines hidden unless `--verbose` is given, and re-exports its names.
"""

import sys

from compgen_tf.cli.common import quiet_tensorflow_logs, select_backend

if __name__ == "__main__":  # before anything imports TensorFlow or Keras
    quiet_tensorflow_logs(sys.argv[1:])
    select_backend(sys.argv[1:])

from compgen_tf.cli.train import DEFAULT_MODEL, DEFAULT_SPLIT, build_parser, main  # noqa: E402

__all__ = ["DEFAULT_MODEL", "DEFAULT_SPLIT", "build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
