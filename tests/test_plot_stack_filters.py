import numpy as np
import pytest

from compgen_tf.cli import plot_stack_filters as psf_cli
from compgen_tf.reporting import plot_stack_filters as psf
from compgen_tf.models.symmetry.palindromes import build_palindrome_model


@pytest.fixture(scope="module")
def model():
    """A 3-unit stack model whose filters ignore the input: unit 0 pushes, unit 1 keeps,
    unit 2 pops, every step."""
    model = build_palindrome_model("stack", embedding_dim=2, units=3, depth=4)
    cell = model.get_layer("stack_lstm").cell
    kernel, bias = cell.get_weights()
    kernel[:, :9] = 0.0
    bias[:9] = -30.0
    for unit, tap in enumerate((0, 1, 2)):
        bias[3 * unit + tap] = 30.0
    cell.set_weights([kernel, bias])
    return model


def test_trace_reads_the_cells_own_filters(model):
    symbols, filters = psf.stack_filter_trace(model, "a b o b a")
    assert symbols == ["a", "b", "o", "b", "a"]
    assert filters.shape == (5, 3, 3)
    np.testing.assert_allclose(filters.sum(-1), 1.0, atol=1e-6)
    np.testing.assert_allclose(filters[:, :, 0].mean(0), [1.0, 0.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(filters[:, 1, 1], 1.0, atol=1e-6)
    np.testing.assert_allclose(filters[:, 2, 2], 1.0, atol=1e-6)


def test_trace_of_a_trained_like_model_depends_on_the_symbol():
    # Filter logits read the input: one unit pushes on `a` only, the other on the rest.
    model = build_palindrome_model("stack", embedding_dim=5, units=2, depth=4)
    model.get_layer("embedding").set_weights([np.eye(6, 5, k=-1, dtype=np.float32)])
    cell = model.get_layer("stack_lstm").cell
    kernel, bias = cell.get_weights()
    kernel[:] = 0.0
    bias[:] = 0.0
    a_row = 2 + 0  # rows: 2 hidden units, then the 5 embedding inputs (a, b, c, d, o)
    kernel[a_row, 0] = 40.0   # unit 0 (filter columns 0-2): push on `a`, keep otherwise
    kernel[a_row, 4] = 40.0   # unit 1 (filter columns 3-5): keep on `a`, push otherwise
    for row in range(3, 7):
        kernel[row, 1] = 40.0
        kernel[row, 3] = 40.0
    cell.set_weights([kernel, bias])
    profile = psf.push_profile(model, ["a b o b a", "c a o a c"])
    assert sorted(profile) == ["a", "b", "c"]
    np.testing.assert_allclose(profile["a"], [1.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(profile["b"], [0.0, 1.0], atol=1e-6)


def test_png_is_written_and_bad_strings_are_refused(model, tmp_path):
    path = psf.plot_stack_filters(model, "a b o b a", tmp_path / "filters.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    with pytest.raises(ValueError, match=r"unknown symbol\(s\) \['x'\]"):
        psf.stack_filter_trace(model, "a x o x a")
    with pytest.raises(ValueError, match="empty string"):
        psf.stack_filter_trace(model, "  ")


def test_cli_on_a_run_directory(model, tmp_path, capsys):
    model.save(tmp_path / "best_model.keras")
    assert psf_cli.main(["--run", str(tmp_path), "--string", "a b o b a"]) == 0
    assert (tmp_path / "stack_filters_a_b_o_b_a.png").exists()
    assert "mean push weight per unit" in capsys.readouterr().out
    assert psf_cli.main(["--run", str(tmp_path / "missing"), "--string", "a o a"]) == 2
    lstm = build_palindrome_model("lstm", embedding_dim=2, units=3)
    (tmp_path / "lstm").mkdir()
    lstm.save(tmp_path / "lstm" / "best_model.keras")
    assert psf_cli.main(["--run", str(tmp_path / "lstm"), "--string", "a o a"]) == 2
    assert "no StackLSTMCell" in capsys.readouterr().err
