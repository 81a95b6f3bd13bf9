"""A run directory that another process holds, or whose files were cut short or damaged:
a fallback or one clear line naming the file, never a traceback (issue 69)."""

import json
import os

import pytest

from compgen_tf import train
from compgen_tf.cli import evaluate
from compgen_tf.experiments.experiment import LOCK, run_dir_lock

# A toy run of 10 steps, checkpointed and validated every 5: seconds on a CPU.
TINY = ["--model", "mlp_baseline", "--task", "rule_learning", "--steps", "10",
        "--set", "training.eval_every=5", "--set", "training.checkpoint_every=5", "--quiet"]


def weights_of(run_dir):
    import keras

    return [w.numpy() for w in keras.saving.load_model(run_dir / "best_model.keras").weights]


def test_a_second_writer_is_refused_with_the_holders_pid(tmp_path, capsys):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with run_dir_lock(run_dir):
        assert train.main(TINY + ["--output", str(run_dir)]) == 2
        err = capsys.readouterr().err
        assert f"is being written by process {os.getpid()}" in err and err.count("\n") == 1
        assert not (run_dir / "config.json").exists()  # nothing written by the refused run
    # Released cleanly: the file is empty and the next writer takes it without a word.
    assert (run_dir / LOCK).read_text() == ""
    assert train.main(TINY + ["--output", str(run_dir)]) == 0
    assert "taking over" not in capsys.readouterr().err


def test_a_lock_left_by_a_dead_process_is_taken_over_with_a_message(tmp_path, capsys):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / LOCK).write_text("999999\n")  # what a killed writer leaves (no flock held)
    assert train.main(TINY + ["--output", str(run_dir)]) == 0
    assert "taking over the lock of process 999999" in capsys.readouterr().err
    assert json.loads((run_dir / "metrics.json").read_text())["steps"] == 10


def test_evaluate_holds_the_lock_too(tmp_path, capsys):
    run_dir = tmp_path / "run"
    assert train.main(TINY + ["--output", str(run_dir)]) == 0
    with run_dir_lock(run_dir):
        assert evaluate.main(["--run", str(run_dir)]) == 2
    assert f"is being written by process {os.getpid()}" in capsys.readouterr().err


def test_a_truncated_checkpoint_falls_back_to_the_one_before(tmp_path, capsys):
    straight, damaged = tmp_path / "straight", tmp_path / "damaged"
    assert train.main(TINY + ["--output", str(straight)]) == 0
    assert train.main(TINY + ["--output", str(damaged)]) == 0
    # As a machine that died while writing step 10's checkpoint leaves it (the run not
    # finished, its last checkpoint's data cut short).
    (damaged / "metrics.json").unlink()
    (data,) = (damaged / "checkpoints").glob("ckpt-10.data-*")
    data.write_bytes(data.read_bytes()[:len(data.read_bytes()) // 2])
    capsys.readouterr()
    assert train.main(TINY + ["--output", str(damaged)]) == 0
    err = capsys.readouterr().err
    assert "skipping checkpoint" in err and "ckpt-10" in err and "Traceback" not in err
    # It resumed from step 5 and repeated steps 6-10 exactly.
    for a, b in zip(weights_of(straight), weights_of(damaged)):
        assert (a == b).all()
    assert ([json.loads(line)["step"] for line in open(damaged / "history.jsonl")]
            == [5, 10])


def test_no_readable_checkpoint_is_one_line_and_exit_2(tmp_path, capsys):
    run_dir = tmp_path / "run"
    assert train.main(TINY + ["--output", str(run_dir)]) == 0
    (run_dir / "metrics.json").unlink()
    for data in (run_dir / "checkpoints").glob("ckpt-*.data-*"):
        data.write_bytes(b"")
    assert train.main(TINY + ["--output", str(run_dir)]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("error: no checkpoint in ") and "can be read" in last


def test_a_damaged_best_model_is_named_as_damaged_not_missing(tmp_path, capsys):
    run_dir = tmp_path / "run"
    assert train.main(TINY + ["--output", str(run_dir)]) == 0
    best = run_dir / "best_model.keras"
    best.write_bytes(best.read_bytes()[:1000])
    assert evaluate.main(["--run", str(run_dir)]) == 2
    err = capsys.readouterr().err
    assert "best_model.keras is damaged" in err and "not found" not in err.lower()
    assert err.count("\n") == 1


def test_a_history_line_cut_short_is_dropped_on_resume(tmp_path, capsys):
    run_dir = tmp_path / "run"
    assert train.main(TINY + ["--output", str(run_dir)]) == 0
    (run_dir / "metrics.json").unlink()
    with open(run_dir / "history.jsonl", "a") as history:
        history.write('{"step": 15, "val_acc')  # a process killed mid-write
    capsys.readouterr()
    assert train.main(TINY + ["--output", str(run_dir)]) == 0
    assert "dropping a line that is not complete JSON" in capsys.readouterr().err
    assert [json.loads(line)["step"] for line in open(run_dir / "history.jsonl")] == [5, 10]


def test_the_best_model_is_written_through_a_temporary_file(tmp_path):
    run_dir = tmp_path / "run"
    assert train.main(TINY + ["--output", str(run_dir)]) == 0
    assert not list(run_dir.glob(".*partial*"))  # renamed into place, nothing left over
    assert (run_dir / "best_model.keras").stat().st_size > 1000


@pytest.mark.parametrize("cut", [0, 10])
def test_a_damaged_checkpoint_index_falls_back_too(tmp_path, capsys, cut):
    run_dir = tmp_path / "run"
    assert train.main(TINY + ["--output", str(run_dir)]) == 0
    (run_dir / "metrics.json").unlink()
    index = run_dir / "checkpoints" / "ckpt-10.index"
    index.write_bytes(index.read_bytes()[:cut])
    assert train.main(TINY + ["--output", str(run_dir)]) == 0
    assert "skipping checkpoint" in capsys.readouterr().err
