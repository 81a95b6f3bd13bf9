"""compgen_tf: Keras 3 / TensorFlow models and tools for compositional generalization.

`compgen_tf.layers` and `compgen_tf.groups` need only Keras (any backend) and NumPy; the
models, data and training import TensorFlow, and are loaded on first use so that
`import compgen_tf.layers` works in a process without TensorFlow (e.g. JAX on a GPU).
"""

import importlib

__version__ = "0.1.0"
_LAZY = {"AttentionSeq2Seq": "compgen_tf.models", "Seq2SeqModel": "compgen_tf.models",
         "UnknownTokenError": "compgen_tf.vocabulary", "Vocabulary": "compgen_tf.vocabulary"}
__all__ = sorted(_LAZY) + ["__version__"]


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'compgen_tf' has no attribute {name!r}")
