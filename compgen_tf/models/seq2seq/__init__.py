"""The LSTM seq2seq baseline with Luong attention (Lake & Baroni 2018)."""

from compgen_tf.models.seq2seq.attention_seq2seq import (AttentionSeq2Seq,
                                                         AttentionSeq2SeqBackbone,
                                                         LuongAttentionDecoder)

__all__ = ["AttentionSeq2Seq", "AttentionSeq2SeqBackbone", "LuongAttentionDecoder"]
