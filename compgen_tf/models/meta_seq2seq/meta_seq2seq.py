"""`MetaSeq2Seq`: the meta sequence-to-sequence learner of Lake (2019)."""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from compgen_tf.models.meta_seq2seq.meta_seq2seq_backbone import MetaSeq2SeqBackbone
from compgen_tf.models.preprocessor import as_str_list
from compgen_tf.models.seq2seq_model import Seq2SeqModel, graph_for_any_ids, output_rows
from compgen_tf.tokens import EOS_ID
from compgen_tf.models.losses import token_cross_entropy


def _backbone_setting(name: str, doc: str) -> property:
    """A read-only property of the task that reads the backbone's setting `name`."""
    return property(lambda self: getattr(self.backbone, name), doc=doc)


@keras.saving.register_keras_serializable(package="compgen_tf")
class MetaSeq2Seq(Seq2SeqModel):
    """Seq2seq learner that translates queries in the context of a support set.

    The input encoder (embedding + stacked biLSTM, directions summed) encodes the
    support commands and the query; the output encoder (same shape) encodes the
    support actions. The final states of the support commands are the keys K and
    those of the support actions the values V of a `KeyValueMemory`; each query
    step h_t reads M_t = softmax(h_t Kᵀ/√m) V, and C_t = tanh(W_c1 [h_t; M_t]).
    The decoder (stacked LSTM, hidden states initialised to C_T, cell states to
    zero) attends over C with Luong dot-product attention, predicts from
    tanh(W_c2 [g_j; u_j]); without decoder attention it predicts from g_j. One
    call handles one episode: every query shares the same support set.

    Args:
        backbone: a `MetaSeq2SeqBackbone`, which holds the architecture: `embedding_dim`
            (m in the paper, 200), `hidden_units` (LSTM units per direction and of the
            decoder, 200), `num_layers` (LSTM layers of each encoder and of the decoder,
            2), `dropout` (on every embedding and between LSTM layers, 0.5),
            `decoder_attention` (False: the "no decoder attention" ablation, the decoder
            only sees C_T), `scaled_decoder_attention` (True divides the decoder's
            attention scores by √m, as the paper writes it; False, the default and what
            the results to date were trained with, uses plain dot products),
            `decoder_cell_from_context` (True starts the decoder LSTMs' cell states at
            C_T as well, as the authors' code does; False, the default, at zero) and
            `memory` (False: the paper's "standard seq2seq" comparison, without the
            memory; the support set is ignored).
        preprocessor: a `compgen_tf.models.preprocessor.Seq2SeqPreprocessor` of every
            command word and action token any episode may use.
        support_loss: whether training also asks the model to translate the support
            items as queries (the paper's support loss; on by default). A training
            option, kept with the model; read by meta-training (`EpisodeBatches`).
        **kwargs: passed to `Seq2SeqModel` (`max_output_length`, `name`).

    Call arguments (`call((support_command_ids, support_action_ids, query_ids,
        target_ids), training)`): teacher-forced logits
        (queries, target_length, target_vocabulary_size). Ids are padded with 0
        and end with `<eos>`, as `encode_commands` / `encode_actions` make them.

    Example:
        >>> model = MetaSeq2Seq.from_words(["dax", "lug"], ["RED", "BLUE"], hidden_units=8,
        ...                                embedding_dim=8)
        >>> model.translate_episode(["dax"], ["RED"], ["dax lug"])  # untrained
        ['...']

    References:
        Lake (2019), Compositional generalization through meta sequence-to-sequence
        learning, NeurIPS, Sec. 3; Luong, Pham & Manning (2015).
    """

    backbone_cls = MetaSeq2SeqBackbone
    task_options = frozenset({"support_loss"})

    def __init__(self, backbone, preprocessor, support_loss=True, **kwargs):
        super().__init__(backbone, preprocessor, **kwargs)
        self.support_loss = bool(support_loss)

    # The backbone's settings, read by meta-training, the export and the tests.
    decoder_attention = _backbone_setting(
        "decoder_attention",
        "Whether the decoder attends over the context (False: it predicts from its LSTM "
        "output alone, the \"no decoder attention\" ablation).")
    scaled_decoder_attention = _backbone_setting(
        "scaled_decoder_attention",
        "Whether the decoder's attention scores are divided by the square root of the "
        "context's width (as the paper writes it; False: plain dot products).")
    use_memory = _backbone_setting(
        "use_memory",
        "Whether the key-value memory over the support set is used (False: the paper's "
        "standard seq2seq, which ignores the support set).")
    dropout_rate = _backbone_setting(
        "dropout_rate", "The dropout rate on every embedding and between LSTM layers.")

    # ----------------------------------------------------------------- network
    def encode_episode(self, support_command_ids, support_action_ids, query_ids, training=False):
        """(context (queries, T, m), its mask, C_T (queries, m), memory attention
        (queries, T, support)); see `MetaSeq2SeqBackbone.encode`."""
        memory, memory_attention = self.backbone.encode(
            support_command_ids, support_action_ids, query_ids, training=training,
            return_memory_attention=True)
        return (*memory, memory_attention)

    def compute_episode_logits(self, support_command_ids, support_action_ids, query_ids,
                               target_ids, training=False):
        """Teacher-forced logits (queries, target_length, target_vocabulary_size)."""
        return self.backbone({"support_command_ids": support_command_ids,
                              "support_action_ids": support_action_ids,
                              "source_ids": query_ids, "target_ids": target_ids},
                             training=training)

    def greedy_decode_episode(self, support_command_ids, support_action_ids, query_ids,
                              max_length=None):
        """Greedy decoding of the queries of one episode, through the library's one sampler.

        Returns:
            ids (queries, max_length) with `<pad>` after each `<eos>`, the decoder
            attention (queries, max_length, T; zero without decoder attention) and the
            memory attention (queries, T, support).
        """
        ids = [keras.ops.convert_to_tensor(x, "int32")
               for x in (support_command_ids, support_action_ids, query_ids)]
        memory, memory_attention = self.backbone.encode(*ids, return_memory_attention=True)
        output_ids, attention = self.backbone.decoder.greedy(
            memory, int(max_length or self.max_output_length))
        if not self.decoder_attention:
            # The decoder then attends over nothing; report zeros of the query's length.
            shape = keras.ops.shape
            attention = keras.ops.zeros((shape(ids[2])[0], shape(output_ids)[1],
                                         shape(ids[2])[1]), attention.dtype)
        return output_ids, attention, memory_attention

    def token_loss(self, data, training=True, seed=None):
        """(summed token cross-entropy, token count) of one episode `(support command ids,
        support action ids, query ids, target ids)`."""
        logits = self.compute_episode_logits(*data[:3], data[3], training=training)
        return token_cross_entropy(data[3], logits, self.label_smoothing)

    def predict_ids(self, data):
        """What `predict` returns for an episode `(support command ids, support action ids,
        query ids[, ...])`: the queries' greedy output ids."""
        return self.greedy_decode_episode(*data[:3])[0]

    def compute_logits(self, source_ids, target_ids, training=False, teacher_forcing_ratio=1.0,
                       seed=None):
        raise TypeError("MetaSeq2Seq reads an episode: use compute_episode_logits(support "
                        "command ids, support action ids, query ids, target ids)")

    def call(self, inputs, training=False):
        return self.compute_episode_logits(*inputs, training=training)

    # -------------------------------------------------------------- text <-> ids
    def encode_episode_arrays(self, support_commands, support_actions, query_commands,
                              query_actions=None):
        """Python-side ids of one episode (raises on unknown words): a tuple of int32 arrays.

        (support command ids, support action ids, query ids[, target ids]).
        """
        out = [_ids(self.preprocessor.source_id, support_commands),
               _ids(self.preprocessor.target_id, support_actions),
               _ids(self.preprocessor.source_id, query_commands)]
        if query_actions is not None:
            out.append(_ids(self.preprocessor.target_id, query_actions))
        return tuple(out)

    def translate_episode(self, support_commands, support_actions, query_commands,
                          batch_size=512, return_errors=False):
        """Greedy translations of `query_commands` given the support pairs (raises on
        invalid input).

        Each row is what the exported episode signature answers for it (`serving_outputs`):
        a translation without `<eos>` within `max_output_length` tokens is the empty string,
        and its error says so.

        Args:
            support_commands: the support commands, a list of strings.
            support_actions: their actions, as many.
            query_commands: the commands to translate.
            batch_size: queries decoded at once.
            return_errors: also return each query's error.

        Returns:
            The queries' action strings; with `return_errors`, `(actions, errors)`.
        """
        support_commands = as_str_list(support_commands)
        support_actions = as_str_list(support_actions)
        query_commands = as_str_list(query_commands)
        if (self.use_memory and not support_commands) or \
                len(support_commands) != len(support_actions):
            raise ValueError(f"need as many support actions as support commands (at least "
                             f"one), got {len(support_commands)} and {len(support_actions)}")
        self.check_commands(support_commands + query_commands)
        self.build()
        support_ids, action_ids, _ = self.encode_episode_arrays(support_commands,
                                                                 support_actions, [])
        actions, errors = [], []
        for start in range(0, len(query_commands), batch_size):
            query_ids = _ids(self.preprocessor.source_id, query_commands[start:start + batch_size])
            ids = self._decode_graph(support_ids, action_ids, query_ids)
            rows = output_rows(self.serving_outputs(ids, tf.fill([len(query_ids)], "")))
            actions += rows[0]
            errors += rows[1]
        return (actions, errors) if return_errors else actions

    def _decode_graph(self, support_ids, action_ids, query_ids):
        return graph_for_any_ids(self, "_greedy_decode_ids", 3)(support_ids, action_ids,
                                                                query_ids)

    def _greedy_decode_ids(self, support_ids, action_ids, query_ids):
        return self.greedy_decode_episode(support_ids, action_ids, query_ids)[0]

    def translate(self, commands, support_commands, support_actions, batch_size=512,
                  return_errors=False):
        """Greedy translations of `commands` in the context of the support pairs
        (`translate_episode` with the queries first)."""
        return self.translate_episode(support_commands, support_actions, commands,
                                      batch_size=batch_size, return_errors=return_errors)

    def serve_episode(self, support_commands, support_actions, query_commands):
        """Strings in, strings out, never raising: the export signature.

        Returns {"actions", "error"} for the queries; a bad support item puts its
        error on every query.
        """
        self.build()
        support_ids, support_error = self.encode_commands(support_commands)
        action_ids, action_error = self.preprocessor.encode_actions(support_actions)
        query_ids, error = self.encode_commands(query_commands)
        messages = tf.concat([tf.strings.join(["support command: ", support_error]),
                              tf.strings.join(["support actions: ", action_error])], axis=0)
        flags = tf.concat([tf.not_equal(support_error, ""), tf.not_equal(action_error, "")],
                          axis=0)
        problem = tf.strings.reduce_join(tf.boolean_mask(messages, flags), separator="; ")
        problem = tf.cond(tf.not_equal(tf.size(support_commands), tf.size(support_actions)),
                          lambda: tf.constant("support commands and actions differ in number"),
                          lambda: problem)
        if self.use_memory:
            problem = tf.cond(tf.equal(tf.size(support_commands), 0),
                              lambda: tf.constant("empty support set"), lambda: problem)
        ok = tf.equal(problem, "")
        # With a broken support set, decode against a one-item dummy memory (answers are dropped).
        support_ids = tf.cond(ok, lambda: support_ids, lambda: tf.fill([1, 1], EOS_ID))
        action_ids = tf.cond(ok, lambda: action_ids, lambda: tf.fill([1, 1], EOS_ID))
        ids = self.greedy_decode_episode(support_ids, action_ids, query_ids)[0]
        return self.serving_outputs(ids, tf.where(ok, error, problem))

    def get_config(self):
        config = super().get_config()
        config["support_loss"] = self.support_loss
        return config


def _ids(id_of, texts) -> np.ndarray:
    """`texts` as ids (len(texts), width): each text's words (`id_of(word)`, which raises on
    an unknown word) then `<eos>`, `<pad>` after."""
    rows = [[id_of(word) for word in t.split()] + [EOS_ID] for t in texts]
    width = max((len(r) for r in rows), default=1)
    out = np.zeros((len(rows), width), np.int32)
    for i, row in enumerate(rows):
        out[i, :len(row)] = row
    return out
