"""`scripts/sa_jump_syntax_swap.py`: how a run's own `jump` row ranks among redrawn rows."""

import importlib.util
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path("scripts").resolve()))
spec = importlib.util.spec_from_file_location("jump_syntax_swap", "scripts/sa_jump_syntax_swap.py")
jump_syntax_swap = importlib.util.module_from_spec(spec)
spec.loader.exec_module(jump_syntax_swap)


@pytest.mark.parametrize("trained, drawn, below, tied, quantile", [
    (0.1, [0.2, 0.5, 1.0, 1.0], 0, 0, 0.0),     # below every draw
    (1.0, [0.2, 0.5, 1.0, 1.0], 2, 2, 0.75),    # ties count half
    (0.6, [0.2, 0.5, 0.7, 0.9], 2, 0, 0.5),
    (0.95, [0.2, 0.5, 0.7, 0.9], 4, 0, 1.0),    # above every draw
])
def test_rank_among_draws(trained, drawn, below, tied, quantile):
    assert jump_syntax_swap.rank_among_draws(trained, drawn) == {
        "draws_below_trained": below, "draws_tied_with_trained": tied,
        "trained_quantile": quantile}


def test_pooled_draws_pool_each_configuration_and_rank_its_runs_own_rows():
    results = {
        "runs/a/seed0": {"trained": 0.1, "jump_row_draws": [0.2, 1.0, 0.95, 0.3]},
        "runs/a/seed1": {"trained": 0.9, "jump_row_draws": [0.2, 0.9, 0.1, 0.3]},
        "runs/b/seed0": {"trained": 0.5, "jump_row_draws": [0.4, 0.6]},
        "runs/c/seed0": {"trained": 0.5},  # scored without --draws: not pooled
    }
    pooled = jump_syntax_swap.pooled_draws(results)
    assert set(pooled) == {"runs/a", "runs/b"}
    a = pooled["runs/a"]
    assert a["runs_x_draws"] == 8 and a["runs"] == 2
    assert a["mean"] == pytest.approx(3.95 / 8)
    assert a["median"] == pytest.approx(0.3)
    assert a["fraction_at_least_0.9"] == pytest.approx(3 / 8)
    # seed0 is below all four of its draws (0.0); seed1 is above three and ties one (0.875).
    assert a["trained_quantile_mean"] == pytest.approx(0.4375)
    assert a["trained_below_every_draw"] == 1
    assert pooled["runs/b"]["trained_quantile_mean"] == pytest.approx(0.5)
    assert pooled["runs/b"]["trained_below_every_draw"] == 0
