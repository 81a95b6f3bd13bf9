import keras
import numpy as np
import pytest

from compgen_tf.models import AttentionSeq2Seq
from compgen_tf.reporting.plot_attention import attention_map, plot_attention


@pytest.fixture(scope="module")
def model():
    keras.utils.set_random_seed(0)
    return AttentionSeq2Seq.from_words(["after", "jump", "left", "twice", "walk"],
                                       ["I_JUMP", "I_WALK"], embedding_dim=4, hidden_units=4,
                                       max_output_length=7)


def test_attention_rows_are_distributions_over_the_input(model):
    inputs, outputs, weights = attention_map(model, "jump twice after walk left")
    assert inputs == ["jump", "twice", "after", "walk", "left", "<eos>"]
    assert weights.shape == (len(outputs), len(inputs)) and 1 <= len(outputs) <= 7
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-5)
    # The map decodes as translate does; translate answers a decoding without <eos>
    # within max_output_length (this untrained model's, maybe) with "" and an error.
    (text,), (error,) = model.translate(["jump twice after walk left"], return_errors=True)
    if outputs[-1] == "<eos>":
        assert " ".join(outputs[:-1]) == text and not error
    else:
        assert text == "" and "no <eos>" in error


def test_png_is_written(model, tmp_path):
    path = plot_attention(model, "walk twice", tmp_path / "a.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_unknown_word_is_rejected(model, tmp_path):
    with pytest.raises(ValueError, match="dax"):
        plot_attention(model, "dax twice", tmp_path / "a.png")
