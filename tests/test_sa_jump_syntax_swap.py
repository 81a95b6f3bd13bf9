"""`tools/sa_jump_syntax_swap.py` (`compgen_tf.analysis.jump_syntax_swap`): how a run's own
`jump` row ranks among redrawn rows."""

import itertools
import json
import math
import os
import statistics
import subprocess
import sys
from fractions import Fraction
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


# The files `tools/sa_jump_syntax_swap.py` wrote, committed.
DRAWS_FILES = sorted((ROOT / "results" / "syntactic_attention").glob("jump_row_draws*.json"))
RANK_KEYS = ("draws_below_trained", "draws_tied_with_trained", "draws_above_trained",
             "trained_quantile")


def scored_runs(path):
    """The runs of a committed draws file that were scored with draws."""
    record = json.loads(path.read_text())
    return {run: scores for run, scores in record["accuracy_on_sample"].items()
            if "jump_row_draws" in scores}


def test_the_committed_draws_files_are_there():
    assert {path.name for path in DRAWS_FILES} >= {
        "jump_row_draws.json", "jump_row_draws_paper_regime.json",
        "jump_row_draws_paper_regime_seeds0_5.json"}
    assert all(scored_runs(path) for path in DRAWS_FILES)


@pytest.mark.parametrize("path", DRAWS_FILES, ids=lambda path: path.stem)
def test_each_committed_rank_is_its_runs_own_rank_among_its_draws(path):
    # Every rank a file stores (files written before a field existed lack it) is the rank
    # of that run's own score among that run's own draws, counted here.
    for run, scores in scored_runs(path).items():
        drawn, trained = scores["jump_row_draws"], scores["trained"]
        below = sum(score < trained for score in drawn)
        tied = sum(score == trained for score in drawn)
        counted = {"draws_below_trained": below, "draws_tied_with_trained": tied,
                   "draws_above_trained": len(drawn) - below - tied,
                   "trained_quantile": (below + tied / 2) / len(drawn)}
        assert jump_syntax_swap.rank_among_draws(trained, drawn) == counted
        stored = {key: scores[key] for key in RANK_KEYS if key in scores}
        assert stored == {key: counted[key] for key in stored}, run
        assert scores["jump_row_draws_mean"] == pytest.approx(sum(drawn) / len(drawn))


@pytest.mark.parametrize("path", DRAWS_FILES, ids=lambda path: path.stem)
def test_each_committed_pooled_summary_is_its_runs_pooled(path):
    # Each summary field a file stores is what `pooled_draws` gives for its runs today.
    record = json.loads(path.read_text())
    pooled = jump_syntax_swap.pooled_draws(record["accuracy_on_sample"])
    assert set(pooled) == set(record["pooled_draws"])
    for configuration, stored in record["pooled_draws"].items():
        assert stored == pytest.approx({key: pooled[configuration][key] for key in stored},
                                       rel=1e-12), configuration


def chance_by_counting(ranks):
    """The chance that independent counts uniform on 0..draws (one per rank) sum to at most
    the observed sum of counts below (ties half), counted exactly by inclusion-exclusion:
    the number of n-tuples in 0..m summing to at most s is
    sum_k (-1)^k C(n, k) C(s - k(m + 1) + n, n)."""
    draws = {rank["draws_below_trained"] + rank["draws_tied_with_trained"]
             + rank["draws_above_trained"] for rank in ranks}
    assert len(draws) == 1, "the formula is for runs with the same number of draws"
    (m,), n = draws, len(ranks)
    s = math.floor(sum(r["draws_below_trained"] + Fraction(r["draws_tied_with_trained"], 2)
                       for r in ranks))
    tuples = sum((-1) ** k * math.comb(n, k) * math.comb(s - k * (m + 1) + n, n)
                 for k in range(n + 1) if s - k * (m + 1) >= 0)
    return Fraction(tuples, (m + 1) ** n)


@pytest.mark.parametrize("name, runs", [("jump_row_draws_paper_regime_seeds0_5", 6),
                                        ("jump_row_draws_paper_regime", 10)])
def test_chance_of_the_paper_regime_ranks_read_from_their_file(name, runs):
    # The paper-regime seeds' ranks as the file records them (seeds 0-5, then 0-9), and the
    # chance that its summary (and docs/research/syntactic_attention.md) reports.
    path = ROOT / "results" / "syntactic_attention" / f"{name}.json"
    ranks = [jump_syntax_swap.rank_among_draws(scores["trained"], scores["jump_row_draws"])
             for scores in scored_runs(path).values()]
    assert len(ranks) == runs
    chance = jump_syntax_swap.chance_of_ranks_this_low(ranks)
    assert chance == pytest.approx(float(chance_by_counting(ranks)), abs=1e-12)
    (stored,) = json.loads(path.read_text())["pooled_draws"].values()
    assert stored["chance_of_ranks_this_low"] == pytest.approx(chance, abs=1e-12)
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
    earlier.write_text(json.dumps(EARLIER))
    refused = tool("--runs", tmp_path / "no_such_run", "--sample", "500", "--draws", "20",
                   "--add-to", earlier)
    assert refused.returncode == 2
    assert "--add-to: the file was written with draws=2" in refused.stderr


def test_add_to_does_not_go_with_repool(tmp_path):
    earlier = tmp_path / "draws.json"
    earlier.write_text(json.dumps(EARLIER))
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
