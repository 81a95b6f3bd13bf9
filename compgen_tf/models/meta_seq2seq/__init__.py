"""Meta seq2seq with a key-value memory (Lake 2019)."""

from compgen_tf.models.meta_seq2seq.meta_seq2seq import (MetaDecoder, MetaSeq2Seq,
                                                         MetaSeq2SeqBackbone)

__all__ = ["MetaDecoder", "MetaSeq2Seq", "MetaSeq2SeqBackbone"]
