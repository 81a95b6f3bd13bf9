"""`tools/sa_jump_syntax_swap.py` (`compgen_tf.analysis.jump_syntax_swap`): how a run's own
`jump` row ranks among redrawn rows."""

import itertools
import os
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from compgen_tf.analysis import jump_syntax_swap

ROOT = Path(__file__).resolve().parents[1]
# The tool imports the package as installed; here, the checkout's.
ENV = dict(os.environ, PYTHONPATH=str(ROOT), TF_CPP_MIN_LOG_LEVEL="2")


def tool(*args):
    return subprocess.run([sys.executable, "tools/sa_jump_syntax_swap.py", *map(str, args)],
                          cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("trained, drawn, below, tied, quantile", [
    (0.1, [0.2, 0.5, 1.0, 1.0], 0, 0, 0.0),     # below every draw
    (1.0, [0.2, 0.5, 1.0, 1.0], 2, 2, 0.75),    # ties count half
    (0.6, [0.2, 0.5, 0.7, 0.9], 2, 0, 0.5),
    (0.95, [0.2, 0.5, 0.7, 0.9], 4, 0, 1.0),    # above every draw
])
def test_rank_among_draws(trained, drawn, below, tied, quantile):
    assert jump_syntax_swap.rank_among_draws(trained, drawn) == {
        "draws_below_trained": below, "draws_tied_with_trained": tied,
        "draws_above_trained": len(drawn) - below - tied, "trained_quantile": quantile}


def ranks(below, tied, draws):
    return [{"draws_below_trained": b, "draws_tied_with_trained": t,
             "draws_above_trained": draws - b - t} for b, t in zip(below, tied)]


@pytest.mark.parametrize("below, tied, draws", [
    ([0, 2, 1], [0, 0, 0], 3), ([3, 0, 1], [0, 1, 0], 3), ([0], [0], 20), ([1, 1], [1, 0], 2)])
def test_chance_of_ranks_this_low_counts_every_equally_likely_outcome(below, tied, draws):
    # Each run's count of draws below its row: uniform on 0..draws, independent over runs.
    observed = sum(below) + sum(tied) / 2
    outcomes = list(itertools.product(range(draws + 1), repeat=len(below)))
    expected = sum(sum(outcome) <= observed for outcome in outcomes) / len(outcomes)
    assert jump_syntax_swap.chance_of_ranks_this_low(ranks(below, tied, draws)) == \
        pytest.approx(expected, abs=1e-12)


def test_chance_of_the_six_paper_regime_ranks():
    # Seeds 0-5 of `jump_row_draws_paper_regime.json`: 3, 7, 17 (and a tie), 5, 0, 0 of 20
    # draws below their own rows. Six counts uniform on 0..20 sum to 32 or less with chance
    # 0.0313227 (the sum's distribution, 21**-6 times its number of compositions).
    chance = jump_syntax_swap.chance_of_ranks_this_low(
        ranks([3, 7, 17, 5, 0, 0], [0, 0, 1, 0, 0, 0], 20))
    assert chance == pytest.approx(0.0313227, abs=1e-6)
    with pytest.raises(ValueError, match="no ranks"):
        jump_syntax_swap.chance_of_ranks_this_low([])


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
    # The sample std (n - 1), not the population std.
    assert a["std"] == pytest.approx(
        statistics.stdev([0.2, 1.0, 0.95, 0.3, 0.2, 0.9, 0.1, 0.3]))
    assert a["fraction_at_least_0.9"] == pytest.approx(3 / 8)
    # seed0 is below all four of its draws (0.0); seed1 is above three and ties one (0.875).
    assert a["trained_quantile_mean"] == pytest.approx(0.4375)
    assert a["trained_below_every_draw"] == 1
    # Counts below of 0 and 3.5 out of 4 each: a sum of at most 3 has 10 of 25 outcomes.
    assert a["chance_of_ranks_this_low"] == pytest.approx(10 / 25)
    assert pooled["runs/b"]["trained_quantile_mean"] == pytest.approx(0.5)
    assert pooled["runs/b"]["trained_below_every_draw"] == 0
    assert pooled["runs/b"]["chance_of_ranks_this_low"] == pytest.approx(2 / 3)


EARLIER = {"sample": 500, "sample_seed": 0, "draws": 2, "command": "python first",
           "accuracy_on_sample": {"runs/a/seed0": {"trained": 0.1, "jump_row_draws": [0.2, 1.0]}}}
SETTINGS = {"sample": 500, "sample_seed": 0, "draws": 2}


def test_merged_record_adds_new_runs_and_keeps_each_addition():
    new = {"runs/a/seed1": {"trained": 0.9, "jump_row_draws": [0.2, 0.9]}}
    merged = jump_syntax_swap.merged_record(EARLIER, "accuracy_on_sample", new, SETTINGS,
                                            "python second", {"commit": "abc"})
    assert list(merged["accuracy_on_sample"]) == ["runs/a/seed0", "runs/a/seed1"]
    assert merged["command"] == "python first"
    assert merged["additions"] == [{"command": "python second", "versions": {"commit": "abc"},
                                    "runs": ["runs/a/seed1"]}]
    assert list(EARLIER["accuracy_on_sample"]) == ["runs/a/seed0"]  # the input is unchanged
    again = jump_syntax_swap.merged_record(merged, "accuracy_on_sample",
                                           {"runs/a/seed2": {"trained": 0.5}}, SETTINGS,
                                           "python third", {})
    assert [a["command"] for a in again["additions"]] == ["python second", "python third"]
    pooled = jump_syntax_swap.pooled_draws(merged["accuracy_on_sample"])["runs/a"]
    assert pooled["runs"] == 2 and pooled["runs_x_draws"] == 4


@pytest.mark.parametrize("new, settings, message", [
    ({"runs/a/seed1": {}}, {**SETTINGS, "sample": 1000},
     "the file was written with sample=500; these runs would be scored with sample=1000"),
    ({"runs/a/seed1": {}}, {**SETTINGS, "draws": 20}, "draws=2"),
    ({"runs/a/seed0": {}, "runs/a/seed1": {}}, SETTINGS, "already in the file: runs/a/seed0"),
])
def test_merged_record_refuses_other_settings_and_runs_already_in(new, settings, message):
    with pytest.raises(ValueError, match=message):
        jump_syntax_swap.merged_record(EARLIER, "accuracy_on_sample", new, settings, "", {})


def test_add_to_a_file_of_other_settings_is_refused_before_scoring(tmp_path):
    earlier = tmp_path / "draws.json"
    earlier.write_text(__import__("json").dumps(EARLIER))
    refused = tool("--runs", tmp_path / "no_such_run", "--sample", "500", "--draws", "20",
                   "--add-to", earlier)
    assert refused.returncode == 2
    assert "--add-to: the file was written with draws=2" in refused.stderr


def test_add_to_does_not_go_with_repool(tmp_path):
    earlier = tmp_path / "draws.json"
    earlier.write_text(__import__("json").dumps(EARLIER))
    refused = tool("--repool", earlier, "--add-to", earlier)
    assert refused.returncode == 2
    assert "--add-to goes with --runs, not --repool" in refused.stderr


def test_a_fixed_sample_keeps_the_test_order_and_refuses_a_size_out_of_range():
    examples = [(f"c{i}", f"a{i}") for i in range(10)]
    sample = jump_syntax_swap.fixed_sample(examples, 4, seed=0)
    assert len(sample) == 4 and sample == sorted(sample, key=examples.index)
    assert sample == jump_syntax_swap.fixed_sample(examples, 4, seed=0)
    for size in (0, 11):
        with pytest.raises(ValueError, match=rf"size must be in \[1, 10\], got {size}"):
            jump_syntax_swap.fixed_sample(examples, size, seed=0)
