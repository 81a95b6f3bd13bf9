import keras
import numpy as np
import pytest
import tensorflow as tf

from compgen_tf.models import AttentionSeq2Seq
from compgen_tf.models.preprocessor import EOS_ID, PAD_ID, UnknownTokenError

SOURCE = ["after", "jump", "left", "twice", "walk"]
TARGET = ["I_JUMP", "I_TURN_LEFT", "I_WALK"]


def make_model(**kwargs):
    keras.utils.set_random_seed(1)
    args = dict(embedding_dim=8, hidden_units=8, dropout=0.0, max_output_length=12)
    args.update(kwargs)
    return AttentionSeq2Seq.from_words(SOURCE, TARGET, **args)


def test_encode_commands_ids_and_errors():
    model = make_model(max_input_length=4)
    ids, error = model.encode_commands(
        tf.constant(["jump twice", "  ", "dax jump zup", "walk left after jump twice"]))
    # <pad> 0, <unk> 1, <sos> 2, <eos> 3, then the sorted words from 4.
    np.testing.assert_array_equal(ids.numpy()[0], [5, 7, EOS_ID])
    np.testing.assert_array_equal(ids.numpy()[1:, 0], [EOS_ID] * 3)
    assert [e.decode() for e in error.numpy()] == [
        "", "empty command", "unknown word(s): dax zup",
        "command too long: 5 words, the maximum is 4"]


def test_logits_shape_and_special_tokens_never_predicted():
    model = make_model()
    source, _ = model.encode_commands(tf.constant(["jump twice", "walk"]))
    target = model.encode_actions(["I_JUMP I_JUMP", "I_WALK"])
    logits = model((source, target))
    assert logits.shape == (2, 3, len(TARGET) + 4)
    assert np.all(np.argmax(logits.numpy(), -1) >= EOS_ID)
    decoded = model.greedy_decode(source).numpy()
    assert decoded.shape == (2, 12)
    assert np.all((decoded == PAD_ID) | (decoded >= EOS_ID))


def test_padding_of_source_does_not_change_outputs():
    model = make_model()
    source, _ = model.encode_commands(tf.constant(["jump twice"]))
    padded = tf.pad(source, [[0, 0], [0, 5]])
    target = model.encode_actions(["I_JUMP I_JUMP"])
    np.testing.assert_allclose(model((source, target)).numpy(), model((padded, target)).numpy(),
                               atol=1e-5)
    np.testing.assert_array_equal(model.greedy_decode(source), model.greedy_decode(padded))


def test_greedy_decode_pads_after_eos():
    model = make_model()
    source, _ = model.encode_commands(tf.constant(["jump twice", "walk left", "jump"]))
    decoded = model.greedy_decode(source).numpy()
    for row in decoded:
        eos = np.flatnonzero(row == EOS_ID)
        if eos.size:
            assert np.all(row[eos[0] + 1:] == PAD_ID)


def test_teacher_forcing_ratio_changes_only_free_running_rows():
    model = make_model()
    source, _ = model.encode_commands(tf.constant(["jump twice"] * 4))
    target = model.encode_actions(["I_JUMP I_JUMP"] * 4)
    forced = model.compute_logits(source, target).numpy()
    always = model.compute_logits(source, target, teacher_forcing_ratio=1.0, seed=[0, 0]).numpy()
    np.testing.assert_allclose(forced, always, atol=1e-6)


def test_save_load_round_trip(tmp_path):
    model = make_model()
    commands = ["jump twice after walk left", "walk"]
    before = model.translate(commands)
    model.save(tmp_path / "m.keras")
    loaded = keras.saving.load_model(tmp_path / "m.keras")
    assert isinstance(loaded, AttentionSeq2Seq)
    assert loaded.translate(commands) == before
    for a, b in zip(model.weights, loaded.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert loaded.backbone.get_config()["hidden_units"] == 8


def test_translate_rejects_bad_input_clearly():
    model = make_model(max_input_length=3)
    with pytest.raises(UnknownTokenError, match="dax"):
        model.translate(["jump dax"])
    with pytest.raises(ValueError, match="empty command"):
        model.translate([""])
    with pytest.raises(ValueError, match="at most 3"):
        model.translate(["walk left after jump"])
    with pytest.raises(TypeError, match="single string"):
        model.translate("jump")
    with pytest.raises(UnknownTokenError, match="I_RUN"):
        model.encode_actions(["I_RUN"])


@pytest.mark.parametrize("kwargs, message", [
    ({"hidden_units": 0}, "hidden_units"), ({"dropout": 1.0}, "dropout"),
    ({"max_output_length": 0}, "max_output_length")])
def test_constructor_validates(kwargs, message):
    with pytest.raises(ValueError, match=message):
        make_model(**kwargs)


def test_a_config_saved_before_tasks_took_their_parts_still_loads():
    """0.2.0 wrote every constructor argument flat into the task's config."""
    old = {"name": "attention_seq2seq", "trainable": True, "source_words": SOURCE,
           "target_words": TARGET, "max_input_length": 32, "max_output_length": 9,
           "source_starts_with_sos": False, "command_grammar": None, "length_head": None,
           "embedding_dim": 8, "hidden_units": 8, "dropout": 0.1, "count_input": False,
           "count_cap": 0, "count_attention": False}
    keras.utils.set_random_seed(0)
    loaded = AttentionSeq2Seq.from_config(old)
    keras.utils.set_random_seed(0)
    built = AttentionSeq2Seq.from_words(SOURCE, TARGET, max_output_length=9, embedding_dim=8,
                                        hidden_units=8)
    assert loaded.name == "attention_seq2seq"
    assert dict(loaded.get_config(), name=None) == dict(built.get_config(), name=None)
    for a, b in zip(loaded.weights, built.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_backbone_takes_and_saves_its_dtype_and_the_task_is_given_its_parts(tmp_path):
    from compgen_tf.models import AttentionSeq2SeqBackbone, Seq2SeqPreprocessor

    preprocessor = Seq2SeqPreprocessor(SOURCE, TARGET, name="preprocessor")
    backbone = AttentionSeq2SeqBackbone(preprocessor.source_vocabulary_size,
                                        preprocessor.target_vocabulary_size, embedding_dim=4,
                                        hidden_units=4, dtype="mixed_bfloat16")
    assert keras.config.dtype_policy().name == "float32"  # the global policy is left alone
    assert backbone.dtype_policy.name == "mixed_bfloat16"
    assert {layer.dtype_policy.name for layer in backbone.layers
            if layer.weights} == {"mixed_bfloat16"}
    assert backbone.get_config()["dtype"]["config"]["name"] == "mixed_bfloat16"
    again = AttentionSeq2SeqBackbone.from_config(backbone.get_config())
    assert {layer.dtype_policy.name for layer in again.layers
            if layer.weights} == {"mixed_bfloat16"}
    task = AttentionSeq2Seq(backbone, preprocessor, max_output_length=5)
    config = task.get_config()
    assert config["backbone"] == keras.saving.serialize_keras_object(backbone)
    assert config["preprocessor"] == keras.saving.serialize_keras_object(preprocessor)
    task.save(tmp_path / "task.keras")
    loaded = keras.saving.load_model(tmp_path / "task.keras")
    source, _ = task.encode_commands(tf.constant(["jump twice", "walk left"]))
    np.testing.assert_array_equal(loaded.greedy_decode(source).numpy(),
                                  task.greedy_decode(source).numpy())
    assert loaded.backbone.dtype_policy.name == "mixed_bfloat16"
    with pytest.raises(ValueError, match="preprocessor must be a Seq2SeqPreprocessor"):
        AttentionSeq2Seq(backbone, "words")
    with pytest.raises(ValueError, match="max_output_length must be positive, got 0"):
        AttentionSeq2Seq(backbone, preprocessor, max_output_length=0)


def test_parts_of_other_vocabularies_are_refused():
    from compgen_tf.models import AttentionSeq2SeqBackbone, Seq2SeqPreprocessor

    preprocessor = Seq2SeqPreprocessor(SOURCE, TARGET)
    backbone = AttentionSeq2SeqBackbone(len(SOURCE) + 5, len(TARGET) + 4, embedding_dim=4,
                                        hidden_units=4)
    with pytest.raises(ValueError, match="the backbone's source vocabulary has 10 tokens, the "
                                         "preprocessor's 9"):
        AttentionSeq2Seq(backbone, preprocessor)
