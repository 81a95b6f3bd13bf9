"""compgen_tf: Keras 3 / TensorFlow models and tools for compositional generalization.

`compgen_tf.layers` and `compgen_tf.groups` need only Keras (any backend) and NumPy; the
models, data and training need TensorFlow. On the TensorFlow backend `import compgen_tf`
imports (and so registers, for `keras.saving.load_model`) the models, as it always did; on
another backend they are loaded on first use, so that `import compgen_tf.layers` works in a
process without TensorFlow (e.g. JAX on a GPU machine). The command line is
`python -m compgen_tf <command>` (`compgen_tf.cli`).
"""

import contextlib
import os
import sys
from pathlib import Path


@contextlib.contextmanager
def _stderr_to_devnull():
    """Sends file descriptor 2 to /dev/null for the duration (C++ writes go there too)."""
    sys.stderr.flush()
    try:
        saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    except OSError:  # no stderr to silence (started with 2>&-)
        yield
        return
    os.dup2(devnull, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _started_from_the_command_line() -> bool:
    # While `python -m compgen_tf...` imports this package, sys.argv[0] is still "-m".
    return sys.argv[0] == "-m" or Path(sys.argv[0]).name == "compgen-tf"


# TensorFlow 2.21 prints its start-up lines (oneDNN, CPU features, absl) while it is
# imported, before it reads TF_CPP_MIN_LOG_LEVEL (measured: the variable hides none of them).
# On the command line they are noise: hidden there unless --verbose is given. An import
# error still shows, as its traceback is printed after the import.
if (_started_from_the_command_line() and "--verbose" not in sys.argv[1:]
        and "tensorflow" not in sys.modules):
    with _stderr_to_devnull():
        import keras
else:
    import keras  # noqa: E402

from compgen_tf.lazy import lazy_attributes  # noqa: E402

__version__ = "0.2.0"
_LAZY = {"AttentionSeq2Seq": "compgen_tf.models", "Seq2SeqModel": "compgen_tf.models",
         "UnknownTokenError": "compgen_tf.models.preprocessor"}
__all__ = sorted(_LAZY) + ["__version__"]
__getattr__ = lazy_attributes(__name__, _LAZY)


if keras.backend.backend() == "tensorflow":
    import compgen_tf.models  # noqa: E402,F401  (registers the model classes for loading)
