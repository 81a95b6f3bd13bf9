"""compgen_tf: Keras 3 / TensorFlow models and tools for compositional generalization.

`compgen_tf.layers` and `compgen_tf.groups` need only Keras (any backend) and NumPy; the
models, data and training need TensorFlow. On the TensorFlow backend `import compgen_tf`
imports (and so registers, for `keras.saving.load_model`) the models, as it always did; on
another backend they are loaded on first use, so that `import compgen_tf.layers` works in a
process without TensorFlow (e.g. JAX on a GPU machine). The command line is
`python -m compgen_tf <command>` (`compgen_tf.cli`).

Importing the package leaves the host process's streams alone. Hiding TensorFlow's start-up
lines is the command line's business: while a command starts (`python -m compgen_tf...`,
`compgen-tf`), this import leaves Keras and the models to the command, which imports them
with those lines hidden (`compgen_tf.cli.import_tensorflow_quietly`).
"""

import sys
from pathlib import Path

from compgen_tf.lazy import lazy_attributes
from compgen_tf.versions import __version__

_LAZY = {"AttentionSeq2Seq": "compgen_tf.models", "Seq2SeqModel": "compgen_tf.models",
         "UnknownTokenError": "compgen_tf.models.preprocessor"}
__all__ = sorted(_LAZY) + ["__version__"]
__getattr__ = lazy_attributes(__name__, _LAZY)


def _a_command_is_starting() -> bool:
    # While `python -m compgen_tf...` imports this package, sys.argv[0] is still "-m". An
    # embedded interpreter may have no sys.argv at all.
    first = (getattr(sys, "argv", None) or [""])[0]
    return first == "-m" or Path(first).name == "compgen-tf"


if not _a_command_is_starting():
    import keras

    if keras.backend.backend() == "tensorflow":
        import compgen_tf.models  # noqa: F401  (registers the model classes for loading)
