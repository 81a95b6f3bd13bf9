"""The baseline's task model: `AttentionSeq2Seq`, strings in and out around its backbone."""

from __future__ import annotations

import keras

from compgen_tf.models.seq2seq.attention_seq2seq_backbone import AttentionSeq2SeqBackbone
from compgen_tf.models.seq2seq_model import Seq2SeqModel


@keras.saving.register_keras_serializable(package="compgen_tf")
class AttentionSeq2Seq(Seq2SeqModel):
    """The LSTM sequence-to-sequence baseline with Luong dot-product attention, text in, text out.

    The network is `AttentionSeq2SeqBackbone` (`self.backbone`): a bidirectional LSTM
    encoder (`hidden_units` per direction) and an LSTM decoder of width 2·`hidden_units`
    with dot-product attention. During training each sequence is teacher-forced with
    probability `teacher_forcing_ratio` (a training setting), otherwise it is fed its own
    argmax predictions.

    Args:
        source_words, target_words, max_input_length, max_output_length,
            command_grammar: see `Seq2SeqModel`.
        embedding_dim: size of the token embeddings.
        hidden_units: LSTM units of each encoder direction.
        dropout: dropout rate on embeddings and on the attentional vector.
        count_input, count_cap, count_attention: the decoder reads the number of actions
            still to emit (`LuongAttentionDecoder`); they need a `length_head`
            (docs/length_generalization.md, section 11).
        **kwargs: passed to `Seq2SeqModel`.

    Example:
        >>> model = AttentionSeq2Seq(["jump", "twice"], ["I_JUMP"], hidden_units=8)
        >>> model.translate(["jump twice"])  # untrained: some action string
        ['...']

    References:
        Luong, Pham & Manning (2015), Effective approaches to attention-based NMT;
        Lake & Baroni (2018), Generalization without systematicity (SCAN baselines).
    """

    def __init__(self, source_words, target_words, embedding_dim=64, hidden_units=64, dropout=0.1,
                 count_input=False, count_cap=0, count_attention=False, **kwargs):
        super().__init__(source_words, target_words, **kwargs)
        if (count_input or count_attention) and self.length_head_args is None:
            raise ValueError("count_input and count_attention need a length head "
                             "(length_head=...): the decoder reads the count of actions left")
        self.backbone = AttentionSeq2SeqBackbone(
            self.source_vocabulary_size, self.target_vocabulary_size, embedding_dim=embedding_dim,
            hidden_units=hidden_units, dropout=dropout, count_input=count_input,
            count_cap=count_cap, count_attention=count_attention, name="backbone")

    def get_config(self):
        config = super().get_config()
        config.update({"embedding_dim": self.backbone.embedding_dim,
                       "hidden_units": self.backbone.hidden_units,
                       "dropout": self.backbone.dropout_rate,
                       "count_input": self.backbone.decoder.count_input,
                       "count_cap": self.backbone.decoder.count_cap,
                       "count_attention": self.backbone.decoder.count_attention})
        return config
