"""Weights that share an initializer argument start from independent draws.

Keras fixes an unseeded random initializer's seed when the instance is made, so one instance
used for two weights draws the same numbers for both. Until 2026-11-30 Syntactic Attention's
semantic and syntactic tables and its two boundary vectors, meta seq2seq's input and output
tables, and `WeightedAutomaton`'s vectors started that way; the reference implementations
draw each weight on its own (`fresh_initializer`)."""

import keras
import numpy as np

from compgen_tf.layers import WeightedAutomaton
from compgen_tf.layers.weight_arguments import fresh_initializer
from compgen_tf.models import MetaSeq2Seq, SyntacticAttention
from tfds_scan import episodes

NORMAL = {"class_name": "RandomNormal", "config": {"stddev": 1.0}}


def differ(a, b):
    a, b = np.ravel(keras.ops.convert_to_numpy(a)), np.ravel(keras.ops.convert_to_numpy(b))
    n = min(a.size, b.size)
    return not np.allclose(a[:n], b[:n])


def test_a_fresh_initializer_draws_anew_unless_seeded():
    unseeded = keras.initializers.get(NORMAL)
    assert not differ(unseeded((50,)), unseeded((50,)))  # the pitfall itself
    copy = fresh_initializer(unseeded)
    assert type(copy) is type(unseeded) and copy.get_config() == unseeded.get_config()
    assert differ(copy((50,)), unseeded((50,)))
    seeded = keras.initializers.RandomNormal(seed=4)
    assert not differ(fresh_initializer(seeded)((50,)), seeded((50,)))


def test_syntactic_attention_tables_and_boundaries_are_independent():
    keras.utils.set_random_seed(0)
    model = SyntacticAttention.from_words(["jump", "walk", "twice"], ["I_JUMP", "I_WALK"],
                                          semantic_dim=12, syntax_embedding_dim=10, syntax_units=6,
                                          encoder_units=6, embeddings_initializer=NORMAL,
                                          max_output_length=8)
    # The functional backbone is built when made: its weights exist.
    backbone = model.backbone
    assert differ(backbone.syntax_shift.sos_syntax, backbone.syntax_shift.eos_syntax)
    assert differ(backbone.get_layer("semantic_embedding").embeddings,
                  backbone.get_layer("syntax_embedding").embeddings)
    assert differ(backbone.get_layer("syntax_embedding").embeddings,
                  backbone.syntax_shift.sos_syntax)


def test_meta_seq2seq_input_and_output_tables_are_independent():
    keras.utils.set_random_seed(0)
    words, actions = episodes.vocabularies("add_jump_augmentation")
    model = MetaSeq2Seq.from_words(words, actions, embedding_dim=8, hidden_units=8, num_layers=1)
    model.build()
    backbone = model.backbone
    assert differ(backbone.get_layer("input_embedding").embeddings,
                  backbone.get_layer("output_embedding").embeddings)


def test_weighted_automaton_vectors_are_independent():
    keras.utils.set_random_seed(0)
    layer = WeightedAutomaton(vocabulary_size=5, state_size=4)
    layer.build((None, 3))
    assert differ(layer.initial_state, layer.readout)
    assert differ(layer.offsets, layer.initial_state)
