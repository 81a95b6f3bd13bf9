import keras
import numpy as np
import pytest
import tensorflow as tf

import tfds_scan
from compgen_tf import registry
from compgen_tf.training.data import encode_split
from compgen_tf.models.export import export_model
from compgen_tf.models import SyntacticAttention
from compgen_tf.training.callbacks import BEST_MODEL
from compgen_tf.training.fit import fit_split
from compgen_tf.models.losses import masked_cross_entropy
from compgen_tf.models.preprocessor import vocabulary_words
from compgen_tf.tokens import EOS_ID, PAD_ID, SOS_ID

SOURCE = ["after", "jump", "left", "twice", "walk"]
TARGET = ["I_JUMP", "I_TURN_LEFT", "I_WALK"]
SIZES = dict(semantic_dim=8, syntax_embedding_dim=8, syntax_units=8, encoder_units=8)
ALL_FLAGS = dict(sequential_semantics=True, syntax_action=True, nonlinear_semantics=True)
END_ONLY = dict(learned_boundary_semantics=False, end_only_boundaries=True)
FIRST_STEP = dict(first_step_on_words=True)


def make_model(**kwargs):
    keras.utils.set_random_seed(1)
    args = dict(SIZES, dropout=0.0, max_output_length=12)
    args.update(kwargs)
    return SyntacticAttention.from_words(SOURCE, TARGET, **args)


def ids_of(model, commands):
    return model.encode_commands(tf.constant(commands))[0]


def test_registered_and_source_wrapped_in_sos_eos():
    assert registry.model_class("syntactic_attention") is SyntacticAttention
    model = make_model()
    ids = ids_of(model, ["jump twice", "walk"]).numpy()
    # <pad> 0, <unk> 1, <sos> 2, <eos> 3, then the sorted words from 4.
    np.testing.assert_array_equal(ids, [[SOS_ID, 5, 7, EOS_ID], [SOS_ID, 8, EOS_ID, PAD_ID]])
    assert model.get_config()["preprocessor"]["config"]["source_starts_with_sos"] is True
    # A reloaded configuration carries source_starts_with_sos=True: accepted and ignored.
    assert make_model(source_starts_with_sos=True).source_starts_with_sos
    with pytest.raises(ValueError, match="always encodes commands as <sos> words <eos>"):
        make_model(source_starts_with_sos=False)


def test_logits_shape_and_special_tokens_never_predicted():
    model = make_model()
    source = ids_of(model, ["jump twice", "walk"])
    target = model.encode_actions(["I_JUMP I_JUMP", "I_WALK"])
    logits = model((source, target))
    assert logits.shape == (2, 3, len(TARGET) + 4)
    assert np.all(np.argmax(logits.numpy(), -1) >= EOS_ID)
    decoded = model.greedy_decode(source).numpy()
    assert decoded.shape == (2, 12) and decoded.dtype == np.int32
    assert np.all((decoded == PAD_ID) | (decoded >= EOS_ID))
    for row in decoded:
        eos = np.flatnonzero(row == EOS_ID)
        if eos.size:
            assert np.all(row[eos[0] + 1:] == PAD_ID)


def test_training_and_decoding_share_the_recurrence():
    model = make_model()
    source = ids_of(model, ["jump twice after walk left", "walk"])
    target = model.encode_actions(["I_WALK", "I_WALK"])
    # Outputs are never fed back: the logits do not depend on the target tokens,
    # nor on teacher forcing, and greedy decoding is their step-wise argmax.
    long_target = tf.fill([2, 12], EOS_ID)
    logits = model.compute_logits(source, long_target).numpy()
    np.testing.assert_allclose(
        model.compute_logits(source, target, teacher_forcing_ratio=0.0, seed=[0, 1]).numpy(),
        logits[:, :target.shape[1]], atol=1e-6)
    expected = np.argmax(logits, -1)
    decoded = model.greedy_decode(source).numpy()
    for row, want in zip(decoded, expected):
        end = np.flatnonzero(want == EOS_ID)
        end = end[0] + 1 if end.size else len(want)
        np.testing.assert_array_equal(row[:end], want[:end])


@pytest.mark.parametrize("flags", [{}, ALL_FLAGS, END_ONLY, FIRST_STEP],
                         ids=["plain", "all_ablations", "end_only_boundaries",
                              "first_step_on_words"])
def test_greedy_step_is_the_training_step_with_projected_keys(flags):
    # Greedy decoding projects the keys through the LSTM's input kernel once per sequence
    # (`prepare_greedy`); each step must still equal the step that training runs.
    model = make_model(**flags)
    decoder = model.backbone.decoder
    source = tf.pad(ids_of(model, ["jump twice after walk left", "walk"]), [[0, 0], [0, 2]])
    memory = model.backbone.encode(source)
    state = decoder.initial_state(memory)
    previous = tf.fill([2], SOS_ID)
    projected = decoder.prepare_greedy(memory)
    for _ in range(4):
        want = decoder.step(previous, state, memory, decoder.prepare(memory))
        got = decoder.greedy_step(previous, state, memory, projected)
        for a, b in zip(tf.nest.flatten(want), tf.nest.flatten(got)):
            np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-5)
        state, previous = want[1], tf.cast(tf.argmax(want[0], -1), tf.int32)
    assert np.abs(state[2].numpy()).max() > 1e-3  # the cell state moved: the test can fail


def test_greedy_decoding_without_attention_gives_the_same_ids():
    # Serving decodes with `return_attention=False`: the loop carries no attention tensor.
    model = make_model()
    # Semantic vectors of unit scale, so that rows translate differently even untrained
    # (at Keras' U(-0.05, 0.05) every row can give the same action).
    semantic = model.backbone.get_layer("semantic_embedding").embeddings
    semantic.assign(np.random.RandomState(0).normal(size=semantic.shape))
    source = ids_of(model, ["jump twice after walk left", "walk", "look around right thrice"])
    with_attention, attention = model.greedy_decode_with_attention(source)
    memory = model.backbone.encode(source)
    ids, none = model.backbone.decoder.greedy(memory, model.max_output_length,
                                              return_attention=False)
    assert none is None and attention.shape[:2] == ids.shape
    np.testing.assert_array_equal(ids.numpy(), with_attention.numpy())
    np.testing.assert_array_equal(model.greedy_decode(source).numpy(), with_attention.numpy())
    assert len(set(map(tuple, ids.numpy().tolist()))) > 1  # untrained, yet rows differ


def test_greedy_decoding_under_a_mixed_precision_policy():
    # The projected-key step reads the cell's float32 weights outside the cell's call.
    from compgen_tf.models.recurrent_decoder import RecurrentDecoder

    keras.config.set_dtype_policy("mixed_bfloat16")
    try:
        model = make_model()
        source = ids_of(model, ["jump twice after walk left", "walk"])
        decoded, attention = model.greedy_decode_with_attention(source)
        decoder = model.backbone.decoder
        decoder.prepare_greedy = lambda memory: RecurrentDecoder.prepare_greedy(decoder, memory)
        decoder.greedy_step = lambda *args: RecurrentDecoder.greedy_step(decoder, *args)
        expected, _ = model.greedy_decode_with_attention(source)
    finally:
        keras.config.set_dtype_policy("float32")
    assert attention.dtype == tf.bfloat16
    np.testing.assert_array_equal(decoded.numpy(), expected.numpy())


@pytest.mark.parametrize("flags", [{}, ALL_FLAGS, END_ONLY, FIRST_STEP],
                         ids=["plain", "all_ablations", "end_only_boundaries",
                              "first_step_on_words"])
def test_padding_of_source_does_not_change_outputs(flags):
    model = make_model(**flags)
    source = ids_of(model, ["jump twice", "walk left after jump"])
    padded = tf.pad(source, [[0, 0], [0, 5]])
    target = model.encode_actions(["I_JUMP I_JUMP", "I_JUMP I_TURN_LEFT I_WALK"])
    np.testing.assert_allclose(model((source, target)).numpy(), model((padded, target)).numpy(),
                               atol=1e-5)
    np.testing.assert_array_equal(model.greedy_decode(source), model.greedy_decode(padded))
    # Rows of different lengths in one batch: each as if it were alone, without padding.
    for i, command in enumerate(["jump twice", "walk left after jump"]):
        alone = ids_of(model, [command])
        np.testing.assert_allclose(model((alone, target[i:i + 1])).numpy()[0],
                                   model((padded, target)).numpy()[i], atol=1e-5)
    decoded, attention = model.attention_weights(padded, max_length=5)
    assert attention.shape == (2, 5, padded.shape[1])
    emitted = decoded.numpy() != PAD_ID  # steps up to and including <eos>
    assert emitted[:, 0].all()
    np.testing.assert_allclose(attention.numpy().sum(-1)[emitted], 1.0, atol=1e-5)
    assert np.all(attention.numpy()[~emitted] == 0.0)
    assert np.all(attention.numpy()[0, :, 4:] == 0.0)  # padding gets no attention


def test_shift_hides_each_word_from_its_own_syntactic_state():
    model = make_model(dropout=0.5)  # eval mode: no dropout
    command = ["walk", "left", "after", "jump", "twice"]
    base = model.backbone.shifted_syntax(ids_of(model, [" ".join(command)])).numpy()[0]
    length = len(command) + 2
    assert base.shape == (length, 16)
    for j in range(1, length - 1):  # positions of the words (0 is <sos>, length-1 is <eos>)
        changed = list(command)
        changed[j - 1] = "walk" if command[j - 1] != "walk" else "jump"
        other = model.backbone.shifted_syntax(ids_of(model, [" ".join(changed)])).numpy()[0]
        np.testing.assert_allclose(other[j], base[j], atol=1e-6, err_msg=f"position {j}")
        differs = np.abs(other - base).max(-1) > 1e-4
        assert differs.any(), j
        assert not differs[0] and not differs[-1]  # the learned <sos>/<eos> vectors
    np.testing.assert_allclose(base[0], model.backbone.syntax_shift.sos_syntax.numpy())
    np.testing.assert_allclose(base[-1], model.backbone.syntax_shift.eos_syntax.numpy())


def test_shift_boundaries_follow_each_rows_length():
    model = make_model()
    source = ids_of(model, ["jump twice after walk", "walk", "jump left"])
    shifted = model.backbone.shifted_syntax(source).numpy()
    lengths = (source.numpy() != PAD_ID).sum(1)
    for row, length in zip(shifted, lengths):
        np.testing.assert_allclose(row[0], model.backbone.syntax_shift.sos_syntax.numpy())
        np.testing.assert_allclose(row[length - 1], model.backbone.syntax_shift.eos_syntax.numpy())
        assert np.all(row[length:] == 0.0)
        for j in range(1, length - 1):
            assert not np.allclose(row[j], model.backbone.syntax_shift.eos_syntax.numpy())
    keys, query = model.backbone.syntax_keys(source)
    assert keys.shape == (3, source.shape[1], 16) and query.shape == (3, 16)
    assert np.all(query.numpy() >= 0.0)  # s_0 = ReLU(W_0 [...])


def test_semantic_stream_is_context_free_unless_sequential():
    commands = ["jump twice", "jump left", "walk jump", "jump after walk"]
    position_of_jump = [1, 1, 2, 1]
    plain = make_model(dropout=0.5)
    sequential = make_model(dropout=0.5, sequential_semantics=True)
    for model, context_free in ((plain, True), (sequential, False)):
        semantics = model.backbone.semantic_embeddings(ids_of(model, commands)).numpy()
        jump = np.stack([semantics[i, j] for i, j in enumerate(position_of_jump)])
        same = [np.allclose(jump[0], other, atol=1e-6) for other in jump[1:]]
        assert all(same) if context_free else not any(same), model.name
    # In training mode dropout does act on the semantic vectors.
    source = ids_of(plain, commands)
    assert not np.allclose(plain.backbone.semantic_embeddings(source, training=True),
                           plain.backbone.semantic_embeddings(source))


@pytest.mark.parametrize("flag", ["sequential_semantics", "syntax_action", "nonlinear_semantics"])
def test_each_ablation_builds_counts_and_trains(flag):
    base = make_model()
    base.build()
    model = make_model(**{flag: True})
    model.build()
    semantic, keys, vocabulary = 8, 16, len(TARGET) + 4
    half = semantic // 2
    extra = {"sequential_semantics": 2 * (4 * half * (semantic + half) + 4 * half),
             "syntax_action": keys * vocabulary,
             "nonlinear_semantics": semantic * semantic + semantic}[flag]
    assert model.count_params() - base.count_params() == extra
    assert model.backbone.get_config()[flag] is True

    source = ids_of(model, ["jump twice", "walk left after jump"])
    target = model.encode_actions(["I_JUMP I_JUMP", "I_TURN_LEFT I_WALK I_JUMP"])
    optimizer = keras.optimizers.Adam(0.01)
    before = [v.numpy().copy() for v in model.trainable_variables]
    with tf.GradientTape() as tape:
        loss = masked_cross_entropy(target, model.compute_logits(source, target, training=True))
    gradients = tape.gradient(loss, model.trainable_variables)
    missing = [v.path for v, g in zip(model.trainable_variables, gradients) if g is None]
    assert not missing
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    assert np.isfinite(float(loss))
    assert all(not np.array_equal(a, v.numpy()) for a, v in zip(before, model.trainable_variables))


NORMAL_EMBEDDINGS = {"embeddings_initializer": {"class_name": "RandomNormal",
                                               "config": {"stddev": 1.0}}}


ALL_OPTIONS_CHANGED = dict(ALL_FLAGS, learned_boundary_semantics=False,
                           boundary_initializer="zeros", syntax_embeddings_initializer="zeros",
                           syntax_word_noise=0.25, syntax_noise_stddev=0.5,
                           syntax_embeddings_l2=1e-5, syntax_tying="bare_words",
                           syntax_tied_words=["jump"], syntax_lender_words=["walk"],
                           weight_initialization="pytorch", **NORMAL_EMBEDDINGS)


SYNTAX_TIE_FIRST_STEP = dict(FIRST_STEP, syntax_tying="bare_words", syntax_tied_words=["jump"],
                             syntax_lender_words=["walk"])  # make train's add-jump model


@pytest.mark.parametrize("flags", [{}, ALL_OPTIONS_CHANGED, dict(END_ONLY, **FIRST_STEP),
                                   SYNTAX_TIE_FIRST_STEP],
                         ids=["plain", "all_options_changed", "boundary_options",
                              "syntax_tie_first_step"])
def test_save_load_round_trip(tmp_path, flags):
    model = make_model(**flags)
    commands = ["jump twice after walk left", "walk"]
    if flags.get("end_only_boundaries"):  # not its zero start: a lost weight must show
        model.translate(commands)
        model.backbone.decoder.end_logit.assign([2.0, -0.5])
    before = model.translate(commands)
    model.save(tmp_path / "m.keras")
    loaded = keras.saving.load_model(tmp_path / "m.keras")
    assert isinstance(loaded, SyntacticAttention)
    assert loaded.translate(commands) == before
    assert len(model.weights) == len(loaded.weights)
    for a, b in zip(model.weights, loaded.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=a.path)
    config, loaded_config = model.get_config(), loaded.get_config()
    assert loaded_config == config
    loaded_config = loaded.backbone.get_config()  # the architecture lives on the backbone
    for flag in ALL_FLAGS:
        assert loaded_config[flag] is bool(flags.get(flag, False))
    expected = flags.get("learned_boundary_semantics", True)
    assert loaded_config["learned_boundary_semantics"] is expected
    assert loaded_config["end_only_boundaries"] is flags.get("end_only_boundaries", False)
    assert loaded_config["first_step_on_words"] is flags.get("first_step_on_words", False)
    assert loaded_config["weight_initialization"] == flags.get("weight_initialization", "keras")


@pytest.mark.parametrize("kwargs, message", [
    ({"semantic_dim": 0}, "semantic_dim must be a positive integer"),
    ({"encoder_units": 2.5}, "encoder_units must be a positive integer"),
    ({"dropout": 1.0}, r"dropout must be in \[0, 1\)"),
    ({"syntax_action": "yes"}, "syntax_action must be true or false"),
    ({"learned_boundary_semantics": "no"}, "learned_boundary_semantics must be true or false"),
    ({"sequential_semantics": True, "semantic_dim": 7}, "semantic_dim must be even"),
    ({"max_output_length": 0}, "max_output_length"),
    ({"embeddings_initializer": "no_such_initializer"}, "embeddings_initializer"),
    ({"boundary_initializer": "no_such_initializer"}, "boundary_initializer"),
    ({"syntax_embeddings_initializer": "no_such_initializer"}, "syntax_embeddings_initializer"),
    ({"syntax_word_noise": 1.0}, r"syntax_word_noise must be in \[0, 1\)"),
    ({"syntax_word_noise": -0.1}, r"syntax_word_noise must be in \[0, 1\)"),
    ({"syntax_noise_stddev": 0.0}, "syntax_noise_stddev must be positive"),
    ({"syntax_embeddings_l2": -1e-5}, "syntax_embeddings_l2 must be a non-negative number"),
    ({"syntax_embeddings_l2": True}, "syntax_embeddings_l2 must be a non-negative number"),
    ({"end_only_boundaries": "yes"}, "end_only_boundaries must be true or false"),
    ({"first_step_on_words": 2}, "first_step_on_words must be true or false"),
    ({"weight_initialization": "torch"}, "weight_initialization must be one of keras, pytorch"),
    ({"end_only_boundaries": True},
     "set learned_boundary_semantics to false with it"),
    (dict(END_ONLY, syntax_action=True), "syntax_action and nonlinear_semantics must be false"),
    (dict(END_ONLY, nonlinear_semantics=True),
     "syntax_action and nonlinear_semantics must be false"),
    ({"syntax_tying": "verbs"}, "syntax_tying must be one of"),
    ({"syntax_tying": "bare_words"}, "takes its words from the training commands"),
    ({"syntax_tied_words": ["jump"], "syntax_lender_words": ["walk"]},
     "need syntax_tying='bare_words'"),
    ({"syntax_tying": "bare_words", "syntax_tied_words": ["hop"], "syntax_lender_words": ["walk"]},
     r"outside the vocabulary \(special tokens included\): \['hop'\]"),
    ({"syntax_tying": "bare_words", "syntax_tied_words": ["jump walk"],
      "syntax_lender_words": ["walk"]}, "must be a list of single words"),
    ({"syntax_tying": "bare_words", "syntax_tied_words": "jump",
      "syntax_lender_words": ["walk"]}, "must be a list of single words"),
    ({"syntax_tying": "bare_words", "syntax_tied_words": ["<eos>"],
      "syntax_lender_words": ["walk"]}, "special tokens included"),
    ({"syntax_tying": "bare_words", "syntax_tied_words": ["jump"], "syntax_lender_words": []},
     "lender_ids must not be empty"),
    ({"syntax_tying": "bare_words", "syntax_tied_words": ["jump"],
      "syntax_lender_words": ["jump", "walk"]}, "both tied and a lender")])
def test_constructor_validates(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_model(**kwargs)


def test_embeddings_initializer_sets_the_scale_of_both_embeddings():
    uniform = make_model()
    normal = make_model(**NORMAL_EMBEDDINGS)
    for model in (uniform, normal):
        model.translate(["walk"])  # builds the weights
    for layer in ("semantic_embedding", "syntax_embedding"):
        assert np.abs(uniform.backbone.get_layer(layer).embeddings.numpy()).max() <= 0.05
        assert 0.8 < normal.backbone.get_layer(layer).embeddings.numpy().std() < 1.2
    assert np.abs(normal.backbone.syntax_shift.sos_syntax.numpy()).max() > 0.5  # boundaries follow the embeddings ...
    zero_boundaries = make_model(boundary_initializer="zeros", **NORMAL_EMBEDDINGS)
    zero_boundaries.translate(["walk"])
    shift = zero_boundaries.backbone.syntax_shift
    for vector in (shift.sos_syntax, shift.eos_syntax):
        assert np.all(vector.numpy() == 0)  # ... unless given their own initializer
    assert 0.8 < zero_boundaries.backbone.get_layer("syntax_embedding").embeddings.numpy().std() < 1.2
    zero_syntax = make_model(syntax_embeddings_initializer="zeros", **NORMAL_EMBEDDINGS)
    zero_syntax.translate(["walk"])
    assert np.all(zero_syntax.backbone.get_layer("syntax_embedding").embeddings.numpy() == 0)
    assert 0.8 < zero_syntax.backbone.get_layer("semantic_embedding").embeddings.numpy().std() < 1.2
    assert np.abs(zero_syntax.backbone.syntax_shift.sos_syntax.numpy()).max() > 0.5


def test_pytorch_initialization_draws_every_lstm_and_dense_weight_as_the_reference():
    """U(-k, k) with k = 1/sqrt(units) for LSTM kernels, U(-2k, 2k) for their (summed) biases
    with no forget-gate 1, U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for dense layers; embeddings
    untouched."""
    # Every flag on: the semantic LSTM and the semantic hidden layer exist too.
    sizes = dict(semantic_dim=16, syntax_embedding_dim=8, syntax_units=25, encoder_units=16)
    model = make_model(weight_initialization="pytorch", **dict(sizes, **ALL_FLAGS))
    limits = {}  # weight path -> the largest |value| the reference's draw allows
    lstms = {"syntax_encoder": 25, "encoder": 16, "decoder_cell": 32, "semantic_encoder": 8}
    for weight in model.weights:
        path = weight.path
        for name, units in lstms.items():
            if f"/{path}".split("/")[1] == name or f"/{path}".split("/")[-2] == name:
                k = 1 / np.sqrt(units)
                limits[path] = 2 * k if path.endswith("/bias") else k
    # semantic_hidden reads [d_i; c_i] (syntax_action), the output its semantic_dim units.
    fan_ins = {"initial_query": 32, "semantic_hidden": 16 + 32, "output_projection": 16}
    for weight in model.weights:
        for name, fan_in in fan_ins.items():
            if f"/{weight.path}".split("/")[-2] == name:
                limits[weight.path] = 1 / np.sqrt(fan_in)
    # 3 weights per LSTM direction (the decoder cell has one), 2 per dense layer.
    assert len(limits) == 27
    for weight in model.weights:
        if weight.path not in limits:
            continue
        values = np.abs(weight.numpy())
        assert values.max() <= limits[weight.path] + 1e-6, weight.path
        assert values.max() > 0.5 * limits[weight.path], weight.path  # drawn, not zeros
    # Unlike Keras' default, no LSTM bias starts at its forget gate's 1, and kernels of one
    # shape are independent draws.
    cell = model.backbone.decoder.cell
    assert np.abs(cell.bias.numpy()).max() < 1.0
    assert not np.allclose(cell.kernel.numpy(), cell.recurrent_kernel.numpy())
    # Embeddings keep embeddings_initializer (Keras' U(-0.05, 0.05) here).
    assert np.abs(model.backbone.get_layer("syntax_embedding").embeddings.numpy()).max() <= 0.05


def test_sum_of_uniforms_has_the_spread_of_two_uniform_draws():
    from compgen_tf.models.initialization import SumOfUniforms
    values = SumOfUniforms(0.5, seed=3)((200_000,)).numpy()
    # U(-0.5, 0.5) twice: values in [-1, 1], variance 2 * 1/12.
    assert np.abs(values).max() <= 1.0 and np.abs(values).max() > 0.95
    assert abs(values.var() - 2 / 12) < 0.003
    assert SumOfUniforms.from_config(SumOfUniforms(0.5, seed=3).get_config()).get_config() == \
        {"limit": 0.5, "terms": 2, "seed": 3}
    with pytest.raises(ValueError, match="limit must be positive"):
        SumOfUniforms(0.0)
    with pytest.raises(ValueError, match="terms must be a positive integer"):
        SumOfUniforms(0.5, terms=0)


@pytest.mark.parametrize("syntax_init", [None, "zeros"], ids=["default", "zero_syntax"])
def test_a_word_seen_only_alone_gets_no_syntactic_gradient(syntax_init):
    """On add-jump `<sos> jump <eos>` is the only training context of `jump`; the shift hides
    `jump` from its own position and the two boundary positions are learned vectors, so its
    syntactic embedding keeps its initial value. Zero-initialised syntactic embeddings still
    learn: a word seen in context gets a gradient."""
    model = make_model(syntax_embeddings_initializer=syntax_init)
    source = ids_of(model, ["jump", "walk twice"])
    target = model.encode_actions(["I_JUMP", "I_WALK I_WALK"])
    with tf.GradientTape() as tape:
        loss = masked_cross_entropy(target, model.compute_logits(source, target, training=True))
    syntax = model.backbone.get_layer("syntax_embedding").embeddings
    semantic = model.backbone.get_layer("semantic_embedding").embeddings
    syntax_gradient, semantic_gradient = tape.gradient(loss, [syntax, semantic])
    jump, walk = (int(ids_of(model, [word])[0, 1]) for word in ("jump", "walk"))
    syntax_gradient = tf.convert_to_tensor(syntax_gradient).numpy()
    semantic_gradient = tf.convert_to_tensor(semantic_gradient).numpy()
    assert np.all(syntax_gradient[jump] == 0)
    assert np.any(syntax_gradient[walk] != 0)
    assert np.any(semantic_gradient[jump] != 0)


def test_syntax_word_noise_replaces_word_rows_only_in_training():
    model = make_model(syntax_word_noise=0.5, syntax_noise_stddev=3.0)
    source = ids_of(model, ["jump twice after walk left twice"] * 64)
    model.translate(["walk"])  # builds the weights
    clean = model.backbone.syntax_embedding(source).numpy()
    noisy = model.backbone.syntax_noise(clean, source, training=True).numpy()
    changed = np.any(noisy != clean, axis=-1)
    is_word = source.numpy() >= 4
    assert not np.any(changed[~is_word])  # <sos>, <eos>, padding keep their rows
    assert 0.4 < changed[is_word].mean() < 0.6
    assert 2.7 < noisy[changed].std() < 3.3
    np.testing.assert_array_equal(model.backbone.shifted_syntax(source).numpy(),
                                  model.backbone.shifted_syntax(source, training=False).numpy())
    assert not np.array_equal(model.backbone.shifted_syntax(source, training=True).numpy(),
                              model.backbone.shifted_syntax(source).numpy())
    assert make_model().backbone.syntax_noise is None  # no extra variable when disabled


def test_a_one_word_command_does_not_read_its_words_syntactic_row():
    """So on add-jump the training trajectory cannot depend on `jump`'s syntactic row, which is
    what makes tools/sa_jump_syntax_swap.py --draws an exact counterfactual."""
    model = make_model()
    source = ids_of(model, ["jump", "walk twice"])
    target = model.encode_actions(["I_JUMP", "I_WALK I_WALK"])
    before = model.compute_logits(source, target).numpy()
    embedding = model.backbone.get_layer("syntax_embedding").embeddings
    table = embedding.numpy()
    jump, walk = (int(ids_of(model, [word])[0, 1]) for word in ("jump", "walk"))
    table[jump] = np.random.default_rng(0).normal(0.0, 5.0, table.shape[1])
    table[walk] = table[walk] + 1.0
    embedding.assign(table)
    after = model.compute_logits(source, target).numpy()
    np.testing.assert_array_equal(after[0], before[0])
    assert np.any(after[1] != before[1])


@pytest.mark.parametrize("flags", [{}, {"sequential_semantics": True}], ids=["plain", "sequential"])
def test_zero_boundary_semantics_read_nothing_at_sos_and_eos(flags):
    learned = make_model(**flags)
    zero = make_model(learned_boundary_semantics=False, **flags)
    source = ids_of(learned, ["jump", "walk twice after jump left"])
    for model in (learned, zero):
        model.translate(["walk"])  # builds the weights
    zero.set_weights(learned.get_weights())
    is_boundary = np.isin(source.numpy(), [SOS_ID, EOS_ID])
    learned_m = learned.backbone.semantic_embeddings(source).numpy()
    zero_m = zero.backbone.semantic_embeddings(source).numpy()
    assert np.all(zero_m[is_boundary] == 0) and np.all(np.any(learned_m[is_boundary] != 0, -1))
    word = ~is_boundary & (source.numpy() != PAD_ID)
    np.testing.assert_array_equal(zero_m[word], learned_m[word])
    # The syntactic stream, hence the attention, is untouched.
    np.testing.assert_array_equal(learned.attention_weights(source, max_length=5)[1].numpy(),
                                  zero.attention_weights(source, max_length=5)[1].numpy())

    if flags:
        return  # a sequential semantic stream still reads the boundary tokens as context
    target = zero.encode_actions(["I_JUMP", "I_TURN_LEFT I_JUMP I_WALK I_WALK"])
    semantic = zero.backbone.get_layer("semantic_embedding").embeddings
    with tf.GradientTape() as tape:
        loss = masked_cross_entropy(target, zero.compute_logits(source, target, training=True))
    gradient = tf.convert_to_tensor(tape.gradient(loss, semantic)).numpy()
    # No boundary can learn to carry an output (e.g. I_JUMP for "jump") ...
    assert np.all(gradient[[SOS_ID, EOS_ID]] == 0)
    # ... so the words' own vectors carry them all.
    jump = int(ids_of(zero, ["jump"])[0, 1])
    assert np.any(gradient[jump] != 0)


def test_end_only_boundaries_can_only_end_the_output():
    """With `end_only_boundaries` an action can come only from an attended word's semantic
    vector: the attention on `<sos>`/`<eos>` reaches the `<eos>` logit alone."""
    model = make_model(**END_ONLY)
    model.translate(["walk"])  # builds the weights
    decoder = model.backbone.decoder
    decoder.end_logit.assign([2.0, -0.5])
    source = tf.pad(ids_of(model, ["jump", "walk twice after jump left"]), [[0, 0], [0, 2]])
    semantics = model.backbone.semantic_embeddings(source).numpy()
    assert semantics.shape[-1] == SIZES["semantic_dim"] + 1
    is_boundary = np.isin(source.numpy(), [SOS_ID, EOS_ID])
    np.testing.assert_array_equal(semantics[..., -1], is_boundary.astype(np.float32))
    assert np.all(semantics[is_boundary][:, :-1] == 0)  # no semantic vector at a boundary
    # A step that attends only to boundaries: every action logit is exactly 0 and `<eos>`
    # gets weight + bias; half on a word: the word's logits at half strength, `<eos>` + 0.5.
    word = semantics[0, 1]  # `jump`
    readouts = np.stack([semantics[0, 0], 0.5 * semantics[0, 0] + 0.5 * word]).astype("float32")
    logits = decoder.output_logits(tf.constant(readouts)).numpy()
    actions = [model.preprocessor.target_id(a) for a in TARGET]
    assert np.all(logits[0, actions] == 0.0) and logits[0, EOS_ID] == pytest.approx(1.5)
    kernel = decoder.output_projection.kernel.numpy()
    np.testing.assert_allclose(logits[1, actions], 0.5 * word[:-1] @ kernel[:, actions],
                               rtol=1e-5, atol=1e-6)
    assert logits[1, EOS_ID] == pytest.approx(0.5 * word[:-1] @ kernel[:, EOS_ID] + 0.5,
                                              rel=1e-5)
    assert decoder.output_projection.bias is None


def test_first_step_on_words_keeps_the_first_step_off_the_boundaries():
    """With `first_step_on_words` the step fed `<sos>` gives `<sos>`/`<eos>` exactly zero
    attention, in training and in greedy decoding, whatever the padding; later steps are
    those of the same model without the flag."""
    plain, masked = make_model(), make_model(**FIRST_STEP)
    for model in (plain, masked):
        model.translate(["walk"])  # builds the weights
    masked.set_weights(plain.get_weights())
    source = tf.pad(ids_of(plain, ["jump", "walk twice after jump left"]), [[0, 0], [0, 2]])
    is_boundary = np.isin(source.numpy(), [SOS_ID, EOS_ID])
    decoder, memory = masked.backbone.decoder, masked.backbone.encode(source)
    state, first = decoder.initial_state(memory), tf.fill([2], SOS_ID)
    for step in (decoder.step(first, state, memory, ()),
                 decoder.greedy_step(first, state, memory, decoder.prepare_greedy(memory))):
        weights = step[2].numpy()
        assert np.all(weights[is_boundary] == 0.0)
        np.testing.assert_allclose(weights.sum(-1), 1.0, atol=1e-6)
    # The unmasked model does look at the boundaries at the first step: the test can fail.
    plain_first = plain.backbone.decoder.step(first, state, memory, ())[2].numpy()
    assert np.all(plain_first[is_boundary] > 0)
    # A later step (fed an action) attends as the unmasked model does.
    action = tf.fill([2], plain.preprocessor.target_id("I_JUMP"))
    np.testing.assert_array_equal(decoder.step(action, state, memory, ())[2].numpy(),
                                  plain.backbone.decoder.step(action, state, memory, ())[2].numpy())
    # A row with no words (which the preprocessor refuses) masks every position at the
    # first step: its logits stay finite rather than NaN, so a batch decodes as a whole.
    empty = tf.constant([[SOS_ID, EOS_ID]])
    memory = masked.backbone.encode(empty)
    logits, _, weights = decoder.step(tf.fill([1], SOS_ID), decoder.initial_state(memory),
                                      memory, ())
    assert np.all(np.isfinite(logits.numpy())) and np.all(np.isfinite(weights.numpy()))


@pytest.mark.parametrize("xla_single_command, flags",
                         [(False, {}), (True, SYNTAX_TIE_FIRST_STEP)],
                         ids=["plain", "xla_syntax_tie_first_step"])
def test_export_matches_translate(tmp_path, xla_single_command, flags):
    model = make_model(**flags)
    commands = ["jump twice", "walk left after jump", "walk"]
    path = export_model(model, tmp_path / "m", xla_single_command=xla_single_command)
    serving = tf.saved_model.load(str(path)).signatures["serving_default"]
    if xla_single_command:  # one command per call: the XLA-compiled, padded path
        calls = [serving(commands=tf.constant([c])) for c in commands + ["dax"]]
        outputs = {key: tf.concat([call[key] for call in calls], 0) for key in calls[0]}
    else:
        outputs = serving(commands=tf.constant(commands + ["dax"]))
    errors = [e.decode() for e in outputs["error"].numpy()]
    actions = [a.decode() for a in outputs["actions"].numpy()]
    # Row by row what translate answers, a decoding without <eos> within max_output_length
    # (untrained) included: "" and the same error.
    assert (actions[:3], errors[:3]) == tuple(model.translate(commands, return_errors=True))
    assert errors[3].startswith("unknown word")


# A small slice of SCAN: the commands of at most 3 words.
EXAMPLES = [(c, tfds_scan.interpret(c)) for c in tfds_scan.all_commands() if len(c.split()) <= 3]


def tiny_scan_model(**kwargs):
    keras.utils.set_random_seed(0)
    source = vocabulary_words(c for c, _ in EXAMPLES)
    target = vocabulary_words(a for _, a in EXAMPLES)
    return SyntacticAttention.from_words(source, target, semantic_dim=16,
                                         syntax_embedding_dim=16, syntax_units=16, encoder_units=16,
                                         dropout=0.0, max_output_length=12, **kwargs)


# The options together in one run: each run costs a trace and hundreds of steps.
@pytest.mark.parametrize("flags", [{}, dict(END_ONLY, **SYNTAX_TIE_FIRST_STEP)],
                         ids=["plain", "end_only_boundaries_syntax_tie_first_step"])
def test_tiny_run_learns_training_set(tmp_path, flags):
    model = tiny_scan_model(**flags)
    split = encode_split(model, EXAMPLES)
    settings = {"batch_size": 16, "learning_rate": 0.01, "clip_norm": 5.0, "max_steps": 800,
                "eval_every": 25, "checkpoint_every": 1000, "patience": 100,
                "stop_at_accuracy": 1.0}
    summary = fit_split(model, settings, tmp_path, split, split, seed=3, verbose=0)
    assert summary["best_val_accuracy"] == 1.0, summary
    best = keras.saving.load_model(tmp_path / BEST_MODEL)
    assert best.translate([c for c, _ in EXAMPLES]) == [a for _, a in EXAMPLES]


@pytest.mark.parametrize("l2", [0.0, 1e-5], ids=["no_penalty", "penalty"])
def test_syntax_embeddings_l2_walks_an_untrained_row_to_zero(tmp_path, l2):
    """`jump` is seen only alone, so its syntactic row has no data gradient: without the
    penalty the trainer leaves it exactly at its draw, with it Adam walks it to zero, while
    the rows the data trains keep their scale."""
    examples = [(c, a) for c, a in EXAMPLES if "jump" not in c.split()] + [("jump", "I_JUMP")]
    model = tiny_scan_model(syntax_embeddings_l2=l2, **NORMAL_EMBEDDINGS)
    split = encode_split(model, examples)
    model.translate(["walk"])  # builds the weights
    embedding = model.backbone.get_layer("syntax_embedding").embeddings
    jump, walk = (int(ids_of(model, [word])[0, 1]) for word in ("jump", "walk"))
    before = embedding.numpy()
    assert len(model.losses) == (1 if l2 else 0)
    # The penalty needs a few hundred Adam steps to walk the row down; without it the row
    # must stay exactly as drawn, which a short run shows as well as a long one.
    steps = 300 if l2 else 60
    settings = {"batch_size": 16, "learning_rate": 0.01, "clip_norm": 5.0, "max_steps": steps,
                "eval_every": steps, "checkpoint_every": 1000, "patience": 100}
    fit_split(model, settings, tmp_path, split, split, seed=3, verbose=0)
    after = embedding.numpy()
    if l2:
        assert np.linalg.norm(after[jump]) < 0.1 * np.linalg.norm(before[jump])
        assert np.linalg.norm(after[walk]) > 0.5 * np.linalg.norm(before[walk])
    else:
        np.testing.assert_array_equal(after[jump], before[jump])
    assert not np.allclose(after[walk], before[walk])


def test_a_training_run_ties_from_the_whole_training_file(tmp_path, monkeypatch):
    """On add-jump bare `walk` and `look` fall into the validation part: the lenders must
    come from the whole training file (fit and validation), not from the fit part."""
    from compgen_tf.experiments import scan

    built = {}

    def stop_before_training(model, *args, **kwargs):
        built["model"] = model
        raise KeyboardInterrupt  # nothing after the model's construction is needed

    # (the run's step between building its model and training it)
    monkeypatch.setattr(scan.ScanExperiment, "prepare",
                        lambda self, model, *args: stop_before_training(model))
    config = scan.SCAN.resolve_config("syntactic_attention", "addprim_jump",
                                      overrides=["model_args.syntax_tying=bare_words"])
    fit = {c for c, _ in scan.split_examples("addprim_jump", "fit", config.data, 0)}
    assert {"walk", "look"}.isdisjoint(fit)  # the premise: else the test shows nothing
    with pytest.raises(KeyboardInterrupt):
        scan.SCAN.train(config, tmp_path / "run", verbose=0, evaluate_splits=())
    model = built["model"]
    assert (model.syntax_tied_words, model.syntax_lender_words) == (["jump"],
                                                                    ["look", "run", "walk"])


def test_tied_rows_embedding_layer():
    from layer_test_case import run_layer_test

    from compgen_tf.layers import TiedRowsEmbedding

    ids = np.array([[4, 5, 6, 0], [6, 6, 5, 4]], dtype="int32")
    run_layer_test(TiedRowsEmbedding, dict(input_dim=8, output_dim=3, tied_ids=[6],
                                           lender_ids=[4, 5]), ids, (2, 4, 3),
                   expected_num_trainable_weights=1, tmp_path=None)
    layer = TiedRowsEmbedding(8, 3, tied_ids=[6], lender_ids=[4, 5])
    out = layer(ids).numpy()
    table = layer.embeddings.numpy()
    np.testing.assert_allclose(out[0, 2], (table[4] + table[5]) / 2, rtol=1e-6)
    np.testing.assert_array_equal(out[0, 0], table[4])
    # The tied row's own weights get no gradient; the lenders share its gradient.
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(np.array([[6]])) * np.array([1.0, 2.0, 3.0]))
    gradient = tf.convert_to_tensor(tape.gradient(loss, layer.embeddings)).numpy()
    assert np.all(gradient[6] == 0)
    np.testing.assert_allclose(gradient[4], [0.5, 1.0, 1.5])
    np.testing.assert_allclose(gradient[5], [0.5, 1.0, 1.5])
    for bad, message in [(dict(tied_ids=[8], lender_ids=[4]), r"tied_ids must be ids in \[0, 8\)"),
                         (dict(tied_ids=[5, 5], lender_ids=[4]), "must not repeat"),
                         (dict(tied_ids=[True], lender_ids=[4]), "tied_ids must be ids")]:
        with pytest.raises(ValueError, match=message):
            TiedRowsEmbedding(8, 3, **bad)


@pytest.mark.parametrize("first_step", [False, True], ids=["tying", "tying_first_step"])
def test_tying_trains_as_the_untied_model(first_step):
    # `jump` is seen only alone: no training command reads its syntactic row, so tying it to
    # `walk`'s changes neither the loss nor any gradient (docs/dev_splits.md).
    train = ["jump", "walk", "walk twice", "walk left after walk"]
    commands = ["jump", "walk twice", "walk left after walk"]
    actions = ["I_JUMP", "I_WALK I_WALK", "I_WALK I_TURN_LEFT I_WALK"]
    results = []
    for tying in ["none", "bare_words"]:
        keras.utils.set_random_seed(1)
        model = registry.build_model(
            "syntactic_attention", dict(SIZES, dropout=0.0, max_output_length=12,
                                        syntax_tying=tying, first_step_on_words=first_step),
            SOURCE, TARGET, train_commands=train)
        data = (ids_of(model, commands), model.encode_actions(actions))
        with tf.GradientTape() as tape:
            loss, _ = model.token_loss(data, training=True, seed=3)
        gradients = tape.gradient(loss, model.trainable_weights)
        results.append((model, loss.numpy(), [tf.convert_to_tensor(g).numpy()
                                              for g in gradients]))
    (untied, untied_loss, untied_grads), (tied, tied_loss, tied_grads) = results
    assert tied.syntax_tied_words == ["jump"] and untied.syntax_tied_words == []
    # Same weights in the same order (auto-generated layer names differ between the two).
    assert [w.shape for w in tied.trainable_weights] == [w.shape for w in untied.trainable_weights]
    for a, b in zip(tied.trainable_weights, untied.trainable_weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_allclose(tied_loss, untied_loss, rtol=1e-6)
    for path, a, b in zip([w.path for w in tied.trainable_weights], tied_grads, untied_grads):
        np.testing.assert_allclose(a, b, atol=1e-6, err_msg=path)
    assert max(np.abs(g).max() for g in tied_grads) > 1e-4  # gradients flow: the test can fail
    # What tying changes is the held-out verb in a new context.
    new_context = ids_of(tied, ["jump left"])
    assert not np.allclose(tied((new_context, tied.encode_actions(["I_TURN_LEFT I_JUMP"]))),
                           untied((new_context, untied.encode_actions(["I_TURN_LEFT I_JUMP"]))))


def test_bare_word_tying_comes_from_the_training_commands():
    from compgen_tf.models.syntactic_attention.syntactic_attention import bare_word_ties
    from tfds_scan.splits import split_examples

    commands = ["jump", "walk", "walk twice", "look", "look left after jump", "run"]
    # `jump` appears in a longer command: only `run` is seen alone and nowhere else.
    assert bare_word_ties(commands) == (["run"], ["jump", "look", "walk"])
    assert bare_word_ties(["jump", "walk"]) == ([], [])  # no lender: nothing is tied
    assert bare_word_ties(["walk twice", "jump"]) == ([], [])
    words, actions = registry.scan_vocabularies()
    train = [c for c, _ in split_examples("addprim_jump")["train"]]
    model = registry.build_model("syntactic_attention", dict(SIZES, syntax_tying="bare_words"),
                                 words, actions, train_commands=train)
    assert (model.syntax_tied_words, model.syntax_lender_words) == (["jump"],
                                                                    ["look", "run", "walk"])
    jump, walk = (model.preprocessor.source_id(w) for w in ("jump", "walk"))
    assert model.backbone.syntax_embedding.tied_ids == [jump]
    rows = model.backbone.syntax_embedding(np.array([[jump, walk]])).numpy()[0]
    table = model.backbone.syntax_embedding.embeddings.numpy()
    lenders = model.backbone.syntax_embedding.lender_ids
    np.testing.assert_allclose(rows[0], table[lenders].mean(0), rtol=1e-5)
    # On simple every verb appears in context: the same setting ties nothing.
    simple = [c for c, _ in split_examples("simple")["train"]]
    untied = registry.build_model("syntactic_attention", dict(SIZES, syntax_tying="bare_words"),
                                  words, actions, train_commands=simple)
    # A plain Embedding when nothing is tied: a `.keras` file keys the weights by the layer's
    # class, so files saved before tying existed must meet the class they were saved with.
    assert type(untied.backbone.syntax_embedding) is keras.layers.Embedding
    # ... and the model reloads without training commands (the backbone keeps the tied ids,
    # here none; the setting itself is the run's model_args).
    reloaded = SyntacticAttention.from_config(untied.get_config())
    assert reloaded.syntax_tied_words == [] and reloaded.syntax_lender_words == []
    assert type(reloaded.backbone.syntax_embedding) is keras.layers.Embedding
    registry.check_model_values("syntactic_attention", {"syntax_tying": "bare_words"})
