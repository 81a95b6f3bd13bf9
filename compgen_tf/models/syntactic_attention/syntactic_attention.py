"""Syntactic Attention's task model: `SyntacticAttention`, strings in and out around its backbone."""

from __future__ import annotations

import keras

from compgen_tf.models.seq2seq_model import Seq2SeqModel
from compgen_tf.models.syntactic_attention.syntactic_attention_backbone import (
    SyntacticAttentionBackbone)


@keras.saving.register_keras_serializable(package="compgen_tf")
class SyntacticAttention(Seq2SeqModel):
    """Sequence-to-sequence model whose attention is driven by syntax and whose output by semantics.

    The network is `SyntacticAttentionBackbone` (`self.backbone`). Each source token x_j
    (the command is always wrapped as `<sos> words <eos>`) gets two representations:

    - semantic: m_j = W_m x_j, a context-free embedding (`semantic_dim`);
    - syntactic: an embedding (`syntax_embedding_dim`) read by a bidirectional
      LSTM (`syntax_units` per direction), shifted so that a position never
      sees its own word, h̃_j = [→h_{j-1}; ←h_{j+1}] (the first position,
      `<sos>`, and the last real position of each row, `<eos>`, get two
      learned vectors instead), then read by a second bidirectional LSTM
      (`encoder_units` per direction) whose outputs h_j are the attention keys
      and values.

    The decoder is an LSTM of width 2·`encoder_units` whose state starts at
    zero and whose first query is s_0 = ReLU(W_0 [→h_final; ←h_final]) (the
    final states of the second bidirectional LSTM). At step i:
    e_ij = s_{i-1}·h_j (masked at padding), α_i = softmax_j(e_i),
    c_i = Σ_j α_ij h_j, d_i = Σ_j α_ij m_j, logits_i = W_out d_i + b_out
    (without b_out, and with the boundaries' share of α_i feeding only the
    `<eos>` logit, under `end_only_boundaries`),
    and s_i = LSTM(c_i, state): c_i is the decoder's only input. Previous
    outputs are never fed back, so training and greedy decoding run the
    same recurrence; `teacher_forcing_ratio` and `seed` are accepted for
    interface compatibility and ignored.

    Choices where the paper is not explicit (it states only "a linear function
    with a softmax" for f and "a dropout rate of 0.5"), made as the authors'
    reference implementation behaves:

    - dropout is applied to the two token embeddings (the semantic m_j and the
      syntactic embedding), nowhere else (no recurrent or output dropout);
    - the output map f has a bias (b_out above; a bias is context-free, so it
      does not break the separation), as has W_0;
    - the two boundary vectors replace the shifted states at `<sos>` and at
      the last non-padding position of each row, so padding never moves them.

    Ablations (paper Tables 2 and 3), all off by default:

    - `sequential_semantics`: m_j are the outputs of a bidirectional LSTM
      (`semantic_dim // 2` per direction) over the semantic embeddings, so
      they depend on the whole command;
    - `syntax_action`: logits_i = W_out [d_i; c_i] + b_out;
    - `nonlinear_semantics`: f is a two-layer network,
      logits_i = W_out ReLU(W_1 d_i + b_1) + b_out, with `semantic_dim` hidden units.

    Args:
        backbone: a `SyntacticAttentionBackbone`, which holds every architecture
            argument below.
        preprocessor: a `compgen_tf.models.preprocessor.Seq2SeqPreprocessor` with
            `source_starts_with_sos=True`: the source is always encoded as
            `<sos> words <eos>`.
        **kwargs: passed to `Seq2SeqModel` (`max_output_length`, `length_head`, `name`).

    `from_words(source_words, target_words, **arguments)` builds both from the word lists
    and these arguments (the backbone's, and `syntax_tying` with its words), besides those
    of `Seq2SeqModel.from_words` (a `source_starts_with_sos=True` is accepted and
    ignored; `False` is rejected):

        semantic_dim: size of the semantic vectors m_j (paper: 120).
        syntax_embedding_dim: size of the syntactic token embeddings (reference: 100).
        syntax_units: LSTM units per direction of the first, shifted, syntactic
            bidirectional LSTM (reference: 100).
        encoder_units: LSTM units per direction of the second syntactic
            bidirectional LSTM (paper: 200); the decoder LSTM has
            `decoder_units = 2 * encoder_units` (paper: 400).
        dropout: dropout rate on the embeddings (paper: 0.5).
        embeddings_initializer: initializer of the two token embeddings (and,
            unless `boundary_initializer` is given, of the learned `<sos>`/`<eos>`
            syntactic vectors), any Keras initializer identifier. Keras's
            default, "uniform", draws from U(-0.05, 0.05); PyTorch's
            `nn.Embedding`, used by the authors' code, draws from N(0, 1):
            `{"class_name": "RandomNormal", "config": {"stddev": 1.0}}`.
        learned_boundary_semantics: whether `<sos>` and `<eos>` have learned
            semantic vectors (True, as in the paper's reference implementation)
            or fixed zero ones (False), so that attending to a boundary yields
            only the output bias.
        boundary_initializer: initializer of the learned `<sos>`/`<eos>`
            syntactic vectors; None (default) uses `embeddings_initializer`.
        syntax_embeddings_initializer: initializer of the syntactic token
            embeddings only; None (default) uses `embeddings_initializer`.
        syntax_word_noise: during training, the probability that a word's
            syntactic embedding (not `<sos>`/`<eos>`/padding) is replaced by a
            fresh draw from N(0, syntax_noise_stddev), independently per token;
            0 (default, as in the paper) disables it.
        syntax_noise_stddev: standard deviation of those draws (default 1.0, the
            N(0, 1) of the reference's embedding initializer).
        syntax_embeddings_l2: coefficient of an L2 penalty on the syntactic token
            embeddings, added to the training loss (0, the default and the paper's
            setting, adds none). Under Adam it walks a row that gets no other
            gradient (a word only ever seen alone) to zero.
        end_only_boundaries: False (default, the paper's) or True: `<sos>` and
            `<eos>` carry no semantic vector (needs `learned_boundary_semantics=False`),
            the attention they take feeds only the `<eos>` logit (a learned weight
            and bias), and the output function has no bias, so an action can come
            only from the semantic vector of a word the decoder attends to. With
            the paper's boundaries a one-word command can be answered from a
            boundary vector instead (add-jump's "a one-word command means I_JUMP").
        first_step_on_words: False (default, the paper's) or True: the first output
            step attends to the words only, never to the source's `<sos>`/`<eos>`.
            Every SCAN output starts with an action, so that action must come from
            a word's semantic vector; the boundaries keep their learned vectors for
            the later steps (ending the output). Another answer to the same
            add-jump failure than `end_only_boundaries`, which changes every step.
        syntax_tying: `"none"` (default, the paper's) or `"bare_words"`: the words
            that the training commands show only alone (a one-word command, like `jump`
            on add-jump) read, as their syntactic embedding, the mean of the rows of the
            words shown both alone and in longer commands (`TiedRowsEmbedding`). The
            words come from the training data (`data_arguments`, which the SCAN tools
            call before building) or are given as `syntax_tied_words` and
            `syntax_lender_words`.
        syntax_tied_words, syntax_lender_words: the words of `"bare_words"` tying;
            None with `"bare_words"` is an error (build through `data_arguments`).
        weight_initialization: `"keras"` (default: Glorot-uniform kernels, orthogonal
            recurrent kernels, zero biases, forget-gate bias 1) or `"pytorch"`, the
            reference code's PyTorch defaults for every LSTM and dense layer (U(-k, k)
            with k = 1/sqrt(units) or 1/sqrt(fan_in); `compgen_tf.models.initialization`).
            Embeddings keep `embeddings_initializer`.
        (Why these options exist, and what each measured on add-jump:
        docs/syntactic_attention_lab_notes.md; tying and the dev-split study:
        docs/dev_splits.md, "The design study".)
        sequential_semantics, syntax_action, nonlinear_semantics: the ablations above.

    Call arguments (`call((source_ids, target_ids), training)`): logits
        (batch, target_length, target_vocabulary_size) of the target steps;
        `<pad>`, `<unk>` and `<sos>` get -1e9.

    Example:
        >>> model = SyntacticAttention.from_words(
        ...     ["jump", "twice"], ["I_JUMP"], semantic_dim=8, syntax_embedding_dim=8,
        ...     syntax_units=8, encoder_units=8)
        >>> model.translate(["jump twice"])  # untrained: some action string
        ['...']
        >>> ids, _ = model.encode_commands(tf.constant(["jump twice"]))
        >>> model.attention_weights(ids, max_length=4)[1].shape  # (batch, steps, source)
        TensorShape([1, 4, 4])

    References:
        Russin, Jo, O'Reilly & Bengio (2019), Compositional generalization in a
        deep seq2seq model by separating syntax and semantics, arXiv:1904.09708;
        Russin, Jo, O'Reilly & Bengio (2020), Compositional generalization by
        factorizing alignment and translation, ACL SRW.
    """

    backbone_cls = SyntacticAttentionBackbone
    # The backbone's tied ids come from `syntax_tying` and its words.
    derived_arguments = frozenset({"syntax_tied_ids", "syntax_lender_ids"})

    def __init__(self, backbone, preprocessor, **kwargs):
        if not preprocessor.source_starts_with_sos:
            raise ValueError("SyntacticAttention always encodes commands as <sos> words <eos>; "
                             "source_starts_with_sos=False is not supported")
        super().__init__(backbone, preprocessor, **kwargs)

    @classmethod
    def from_words(cls, source_words, target_words, syntax_tying="none", syntax_tied_words=None,
                   syntax_lender_words=None, **kwargs):
        if not kwargs.pop("source_starts_with_sos", True):
            raise ValueError("SyntacticAttention always encodes commands as <sos> words <eos>; "
                             "source_starts_with_sos=False is not supported")
        return super().from_words(source_words, target_words, source_starts_with_sos=True,
                                  syntax_tying=syntax_tying, syntax_tied_words=syntax_tied_words,
                                  syntax_lender_words=syntax_lender_words, **kwargs)

    @classmethod
    def backbone_from_words(cls, preprocessor, syntax_tying="none", syntax_tied_words=None,
                            syntax_lender_words=None, **backbone_args):
        tied_ids, lender_ids = _tying_ids(preprocessor, syntax_tying, syntax_tied_words,
                                          syntax_lender_words)
        return super().backbone_from_words(preprocessor, syntax_tied_ids=tied_ids,
                                           syntax_lender_ids=lender_ids, **backbone_args)

    @classmethod
    def data_arguments(cls, model_args: dict, train_commands) -> dict:
        """`model_args` with what comes from the training commands filled in: the words of
        `syntax_tying="bare_words"` (`bare_word_ties`)."""
        model_args = dict(model_args)
        if (model_args.get("syntax_tying") == "bare_words"
                and model_args.get("syntax_tied_words") is None):
            tied, lenders = bare_word_ties(train_commands)
            model_args.update(syntax_tied_words=tied, syntax_lender_words=lenders)
        return model_args

    @property
    def syntax_tied_words(self) -> list[str]:
        """The words whose syntactic embedding is tied (`syntax_tying="bare_words"`)."""
        ids = self.backbone.get_config()["syntax_tied_ids"]
        return [self.preprocessor.source_vocabulary[i] for i in ids]

    @property
    def syntax_lender_words(self) -> list[str]:
        """The words whose syntactic embeddings the tied words read the mean of."""
        ids = self.backbone.get_config()["syntax_lender_ids"]
        return [self.preprocessor.source_vocabulary[i] for i in ids]


def _tying_ids(preprocessor, tying, tied_words, lender_words):
    """(tied ids, lender ids) of the syntactic embedding, checked against the vocabulary."""
    if tying not in SYNTAX_TYING:
        raise ValueError(f"syntax_tying must be one of {list(SYNTAX_TYING)}, got {tying!r}")
    if tying == "none":
        if tied_words or lender_words:
            raise ValueError("syntax_tied_words and syntax_lender_words need "
                             "syntax_tying='bare_words'")
        return [], []
    if tied_words is None or lender_words is None:
        raise ValueError("syntax_tying='bare_words' takes its words from the training "
                         "commands: build with SyntacticAttention.data_arguments(model_args, "
                         "train_commands), or give syntax_tied_words and syntax_lender_words")
    for name, words in (("syntax_tied_words", tied_words),
                        ("syntax_lender_words", lender_words)):
        if isinstance(words, str) or not all(isinstance(w, str) and len(w.split()) == 1
                                             for w in words):
            raise ValueError(f"{name} must be a list of single words, got {words!r}")
        unknown = [w for w in words if w not in preprocessor.source_words]
        if unknown:
            raise ValueError(f"{name} names words outside the vocabulary (special "
                             f"tokens included): {unknown}")
    return ([preprocessor.source_id(w) for w in tied_words],
            [preprocessor.source_id(w) for w in lender_words])


SYNTAX_TYING = ("none", "bare_words")


def bare_word_ties(commands) -> tuple[list[str], list[str]]:
    """(tied, lenders) for `syntax_tying="bare_words"`, from training commands.

    Tied: the words that make a one-word command and appear in no longer command.
    Lenders: the words that make a one-word command and also appear in longer ones. When
    either list is empty nothing is tied (both are returned empty).

    Example:
        >>> bare_word_ties(["jump", "walk", "walk twice", "look", "look left"])
        (['jump'], ['look', 'walk'])
    """
    bare, in_context = set(), set()
    for command in commands:
        words = command.split()
        (bare if len(words) == 1 else in_context).update(words)
    tied, lenders = sorted(bare - in_context), sorted(bare & in_context)
    return (tied, lenders) if tied and lenders else ([], [])
