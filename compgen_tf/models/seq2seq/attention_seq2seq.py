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
        backbone: an `AttentionSeq2SeqBackbone` (its arguments: `embedding_dim`,
            `hidden_units`, `dropout`, `count_input`, `count_cap`, `count_attention`).
        preprocessor: a `compgen_tf.models.preprocessor.Seq2SeqPreprocessor`.
        **kwargs: passed to `Seq2SeqModel` (`max_output_length`, `length_head`,
            `length_loss_weight`, `name`). A backbone whose decoder reads the number of
            actions still to emit (`count_input`, `count_attention`;
            docs/length_generalization.md, section 11) needs a `length_head`.

    Example:
        >>> model = AttentionSeq2Seq.from_words(["jump", "twice"], ["I_JUMP"], hidden_units=8)
        >>> model.translate(["jump twice"])  # untrained: some action string
        ['...']

    References:
        Luong, Pham & Manning (2015), Effective approaches to attention-based NMT;
        Lake & Baroni (2018), Generalization without systematicity (SCAN baselines).
    """

    backbone_cls = AttentionSeq2SeqBackbone

    def __init__(self, backbone, preprocessor, **kwargs):
        super().__init__(backbone, preprocessor, **kwargs)
        decoder = self.backbone.decoder
        if (decoder.count_input or decoder.count_attention) and not self._has_length_head:
            raise ValueError("count_input and count_attention need a length head "
                             "(length_head=...): the decoder reads the count of actions left")
