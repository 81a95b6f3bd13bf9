"""The Transformer's task model: `TransformerSeq2Seq`, strings in and out around its backbone."""

from __future__ import annotations

import keras

from compgen_tf.models.seq2seq_model import Seq2SeqModel
from compgen_tf.models.transformer.transformer_backbone import TransformerBackbone


@keras.saving.register_keras_serializable(package="compgen_tf")
class TransformerSeq2Seq(Seq2SeqModel):
    """The Transformer encoder-decoder, text in, text out (the registry's `transformer`).

    The network is `TransformerBackbone` (`self.backbone`); training is teacher-forced at
    every position at once (a `teacher_forcing_ratio` below 1 is refused), and translation
    is greedy through the library's sampler with a key/value cache. Label smoothing and a
    warm-up of the learning rate are training settings (`training.label_smoothing`,
    `training.warmup_steps`), as for every model.

    Args:
        backbone: a `TransformerBackbone` (its arguments: `width`, `num_layers`,
            `num_heads`, `feedforward_dim`, `dropout`, `positions`,
            `max_relative_distance`, `max_positions`, `universal`, `scale_embeddings`).
        preprocessor: a `compgen_tf.models.preprocessor.Seq2SeqPreprocessor`.
        **kwargs: passed to `Seq2SeqModel` (`max_output_length`, `length_head`,
            `length_loss_weight`, `name`).

    Raises:
        ValueError: learned positions whose table is shorter than the longest command
            (`max_input_length` words, `<sos>` and `<eos>`) or output (`max_output_length`).

    Example:
        >>> model = TransformerSeq2Seq.from_words(["jump", "twice"], ["I_JUMP"], width=8,
        ...                                       num_layers=1, num_heads=2, feedforward_dim=16)
        >>> model.translate(["jump twice"])  # untrained: some action string
        ['...']

    References:
        Vaswani et al. (2017), Attention is all you need; Csordás, Irie & Schmidhuber (2021),
        The devil is in the detail: simple tricks improve systematic generalization of
        Transformers.
    """

    backbone_cls = TransformerBackbone

    def __init__(self, backbone, preprocessor, **kwargs):
        super().__init__(backbone, preprocessor, **kwargs)
        if self.backbone.positions == "learned":
            longest = max(self.max_output_length, self.max_input_length + 2)
            if self.backbone.max_positions < longest:
                raise ValueError(f"learned positions need max_positions >= {longest} (the "
                                 "longest command or output in tokens), got "
                                 f"{self.backbone.max_positions}")

    def compile(self, *args, teacher_forcing_ratio=1.0, **kwargs):
        """`Seq2SeqModel.compile`; a `teacher_forcing_ratio` below 1 is a ValueError (the
        decoder computes every target position at once, from the targets)."""
        if float(teacher_forcing_ratio) < 1.0:
            raise ValueError("the Transformer is trained teacher-forced at every position at "
                             f"once: teacher_forcing_ratio must be 1, got {teacher_forcing_ratio}")
        super().compile(*args, teacher_forcing_ratio=teacher_forcing_ratio, **kwargs)
