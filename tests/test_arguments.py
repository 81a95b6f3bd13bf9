import numpy as np
import pytest

from compgen_tf.arguments import positive_int, rate
from compgen_tf.models import AttentionSeq2Seq, MetaSeq2Seq


@pytest.mark.parametrize("value, expected", [(1, 1), (200, 200), (3.0, 3), (np.int64(7), 7)])
def test_positive_int_accepts_whole_numbers(value, expected):
    result = positive_int("units", value)
    assert result == expected and type(result) is int


@pytest.mark.parametrize("value", [0, -2, 2.5, True, "3", None])
def test_positive_int_names_the_argument(value):
    with pytest.raises(ValueError, match=r"^units must be a positive integer, got "):
        positive_int("units", value)


@pytest.mark.parametrize("value, expected", [(0, 0.0), (0.5, 0.5), (np.float32(0.25), 0.25)])
def test_rate_accepts_the_unit_interval(value, expected):
    result = rate("dropout", value)
    assert result == expected and type(result) is float


@pytest.mark.parametrize("value", [1.0, -0.1, "0.5", False, None])
def test_rate_names_the_argument(value):
    with pytest.raises(ValueError, match=r"^dropout must be in \[0, 1\), got "):
        rate("dropout", value)


@pytest.mark.parametrize("model_class", [AttentionSeq2Seq, MetaSeq2Seq])
def test_models_reject_fractional_sizes_instead_of_truncating(model_class):
    with pytest.raises(ValueError, match="hidden_units must be a positive integer, got 2.5"):
        model_class.from_words(["walk"], ["I_WALK"], hidden_units=2.5)
