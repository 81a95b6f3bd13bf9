"""`CountingSeq2Seq`: the baseline with a length head whose count steers the attention."""

from __future__ import annotations

import keras

from compgen_tf.models.seq2seq.attention_seq2seq import AttentionSeq2Seq

# The length head chosen on the development splits (docs/length_generalization.md, 7-9):
# three numbers, reading right to left, an L1 penalty on the automaton's offsets.
COUNTING_LENGTH_HEAD = {"state_size": 3, "go_backwards": True, "offset_l1": 1e-3}


@keras.saving.register_keras_serializable(package="compgen_tf")
class CountingSeq2Seq(AttentionSeq2Seq):
    """The LSTM seq2seq baseline that knows how long its output is and how much is left.

    An `AttentionSeq2Seq` with two defaults changed, chosen on development splits built from
    SCAN's length training file (docs/length_generalization.md, sections 7-12):
    - `length_head`: a `compgen_tf.layers.WeightedAutomaton` reads the command right to left
      and predicts its number of actions. It is fitted first, alone, and frozen
      (`fit_length_head`); the decoder is trained without `<eos>` targets, and greedy
      decoding emits exactly the head's rounded count. The decision to stop is out of the
      per-step softmax, and the count extrapolates: it is linear in the repetitions.
    - `count_attention`: the number of actions still to emit (the target's length in
      training, the head's count in decoding, counted down by one a step) biases the
      attention: the score of source position j gains (count left) · (u · e_j), u learned.
      The LSTM itself does not read the count, so the count steers which part of the command
      is read, not what is written for it.

    Args:
        backbone: an `AttentionSeq2SeqBackbone`, usually with `count_attention=True`.
        preprocessor: a `compgen_tf.models.preprocessor.Seq2SeqPreprocessor`.
        length_head: the `compgen_tf.layers.WeightedAutomaton` head (required: this model
            always has one; `from_words` builds `COUNTING_LENGTH_HEAD` by default).
        **kwargs: passed to `AttentionSeq2Seq`.

    `from_words` takes the arguments of `AttentionSeq2Seq.from_words` with two defaults
    changed: `length_head=None` means `COUNTING_LENGTH_HEAD`, and `count_attention=True`.

    Example:
        >>> model = CountingSeq2Seq.from_words(["jump", "twice"], ["I_JUMP"], hidden_units=8)
        >>> model.length_head.state_size, model.backbone.decoder.count_attention
        (3, True)

    References:
        Newman, Hewitt, Liang & Manning (2020), The EOS decision and length extrapolation;
        Luong, Pham & Manning (2015), Effective approaches to attention-based NMT.
    """

    def __init__(self, backbone, preprocessor, length_head=None, **kwargs):
        if length_head is None:
            raise ValueError("CountingSeq2Seq always has a length head: pass length_head (a "
                             "WeightedAutomaton), or build with from_words")
        super().__init__(backbone, preprocessor, length_head=length_head, **kwargs)

    @classmethod
    def from_words(cls, source_words, target_words, length_head=None, count_attention=True,
                   **kwargs):
        if length_head is None:
            length_head = dict(COUNTING_LENGTH_HEAD)
        return super().from_words(source_words, target_words, length_head=length_head,
                                  count_attention=count_attention, **kwargs)
