"""compgen_tf: Keras 3 / TensorFlow models and tools for compositional generalization."""

from compgen_tf.models import AttentionSeq2Seq, Seq2SeqModel
from compgen_tf.vocabulary import UnknownTokenError, Vocabulary

__version__ = "0.1.0"
__all__ = ["AttentionSeq2Seq", "Seq2SeqModel", "UnknownTokenError", "Vocabulary", "__version__"]
