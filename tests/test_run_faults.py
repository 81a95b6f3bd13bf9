"""A run directory that another process holds, or whose files were cut short or damaged:
a fallback or one clear line naming the file, never a traceback (issue 69)."""

import json
import os
import shutil

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


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """One TINY run, trained once for the tests that damage a copy of a finished run."""
    run_dir = tmp_path_factory.mktemp("finished") / "run"
    assert train.main(TINY + ["--output", str(run_dir)]) == 0
    return run_dir


def copy_of(run_dir, to):
    shutil.copytree(run_dir, to)
    return to


def test_a_second_writer_is_refused_with_the_holders_pid(tmp_path, capsys, monkeypatch):
    # An empty data directory: the refusal comes before the run reads its data (building a
    # dataset the first time prints TFDS's progress bars, more lines than the one).
    monkeypatch.setenv("COMPGEN_TF_DATA_DIR", str(tmp_path / "data"))
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


# --- issue 69's fault-injection suite: what tools/fault_injection.py found, one test each.

def damage(path, how):
    """Cuts `path` to half ("truncate") or overwrites 16 bytes in its middle with bytes
    that are not UTF-8 ("garble"), as tools/fault_injection.py does."""
    data = path.read_bytes()
    if how == "truncate":
        path.write_bytes(data[:len(data) // 2])
    else:
        middle = len(data) // 2
        path.write_bytes(data[:middle] + b"\xff\xfe\x00\x81" * 4 + data[middle + 16:])


def one_error_line(capsys, name):
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and name in err, err
    return err


@pytest.mark.parametrize("how", ["truncate", "garble"])
@pytest.mark.parametrize("name", ["config.json", "metrics.json"])
def test_a_damaged_run_record_is_one_line_naming_it(tmp_path, capsys, finished_run, name, how):
    run_dir = copy_of(finished_run, tmp_path / "run")
    damage(run_dir / name, how)
    capsys.readouterr()
    assert train.main(TINY + ["--output", str(run_dir)]) == 2
    assert "is damaged" in one_error_line(capsys, str(run_dir / name))
    assert evaluate.main(["--run", str(run_dir)]) == 2
    one_error_line(capsys, str(run_dir / name))


def test_a_best_model_damaged_inside_is_refused_not_loaded(tmp_path, capsys):
    run_dir = tmp_path / "run"
    assert train.main(TINY + ["--output", str(run_dir)]) == 0
    damage(run_dir / "best_model.keras", "garble")  # the zip's directory at its end intact
    capsys.readouterr()
    assert evaluate.main(["--run", str(run_dir)]) == 2
    assert "best_model.keras is damaged" in one_error_line(capsys, "best_model.keras")
    # A finished run says so too, instead of "finished" over a model that cannot be read.
    assert train.main(TINY + ["--output", str(run_dir)]) == 2
    one_error_line(capsys, "best_model.keras")


def test_a_finished_run_whose_best_model_is_gone_says_so(tmp_path, capsys):
    run_dir = tmp_path / "run"
    assert train.main(TINY + ["--output", str(run_dir)]) == 0
    (run_dir / "best_model.keras").unlink()
    capsys.readouterr()
    # Was a FileNotFoundError traceback (exit 1): one line naming the file, exit 2.
    assert train.main(TINY + ["--output", str(run_dir)]) == 2
    assert "is a finished run but its best model is missing" in one_error_line(
        capsys, "best_model.keras")
    assert evaluate.main(["--run", str(run_dir)]) == 2
    one_error_line(capsys, "best_model.keras")


@pytest.mark.parametrize("cut", ["empty", "truncate", "garble"])
def test_a_damaged_checkpoint_list_is_rebuilt_from_the_files(tmp_path, capsys, finished_run,
                                                             cut):
    straight, damaged = finished_run, copy_of(finished_run, tmp_path / "damaged")
    (damaged / "metrics.json").unlink()
    state = damaged / "checkpoints" / "checkpoint"
    state.write_bytes(b"") if cut == "empty" else damage(state, cut)
    capsys.readouterr()
    assert train.main(TINY + ["--output", str(damaged)]) == 0
    assert f"{state} is damaged" in capsys.readouterr().err
    # Resumed from step 10 (TensorFlow alone would start again from step 0 and repeat
    # the history's lines), the same weights as the run never damaged.
    assert [json.loads(line)["step"] for line in open(damaged / "history.jsonl")] == [5, 10]
    for a, b in zip(weights_of(straight), weights_of(damaged)):
        assert (a == b).all()


def test_damaged_bytes_in_the_history_drop_their_line(tmp_path, capsys):
    run_dir = tmp_path / "run"
    assert train.main(TINY + ["--output", str(run_dir)]) == 0
    (run_dir / "metrics.json").unlink()
    history = run_dir / "history.jsonl"
    lines = history.read_bytes().splitlines(keepends=True)
    history.write_bytes(lines[0] + b'{"step": \xff\xfe}\n' + b"17\n" + lines[1])
    capsys.readouterr()
    assert train.main(TINY + ["--output", str(run_dir)]) == 0
    assert capsys.readouterr().err.count("dropping a line") == 2
    assert [json.loads(line)["step"] for line in open(history)] == [5, 10]


def test_a_full_disk_is_one_line_and_the_last_checkpoint_resumes(tmp_path, capsys,
                                                                  monkeypatch):
    import errno

    from compgen_tf.training import callbacks

    straight, full = tmp_path / "straight", tmp_path / "full"
    assert train.main(TINY + ["--output", str(straight)]) == 0
    written = callbacks.append_history

    def append_until_full(run_dir, record):
        if record["step"] > 5:  # the disk fills after step 5's checkpoint
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC),
                          str(run_dir / "history.jsonl"))
        written(run_dir, record)

    monkeypatch.setattr(callbacks, "append_history", append_until_full)
    capsys.readouterr()
    assert train.main(TINY + ["--output", str(full)]) == 2
    err = one_error_line(capsys, "history.jsonl")
    assert "No space left on device" in err and "same command again" in err
    monkeypatch.undo()
    assert train.main(TINY + ["--output", str(full)]) == 0
    for a, b in zip(weights_of(straight), weights_of(full)):
        assert (a == b).all()


@pytest.mark.parametrize("how", ["truncate", "garble"])
def test_a_damaged_results_file_is_named(tmp_path, capsys, how):
    from compgen_tf.cli import report
    from compgen_tf.experiments.results import load_results, write_results

    path = write_results("mlp_baseline", "rule_learning", "python -m compgen_tf reproduce",
                         [{"seed": 0, "test_accuracy": 0.5}], {"keras": "3"},
                         results_dir=tmp_path)
    damage(path, how)
    assert report.main(["--results-dir", str(tmp_path), "--check"]) == 2
    one_error_line(capsys, str(path))
    with pytest.raises(ValueError, match="is damaged"):
        load_results(path)


# A search of two trials of the toy MLP, 4 steps each.
TINY_TUNE = ["--model", "mlp_baseline", "--task", "rule_learning", "--tuner", "random",
             "--max-trials", "2", "--steps", "4", "--seed", "0", "--quiet"]


def test_tune_seed_0_is_reproducible_and_a_damaged_oracle_is_named(tmp_path, capsys):
    from compgen_tf.cli.tune import main as tune

    import random

    chosen = []
    for name, state in (("first", 1), ("second", 2)):
        # Python's global random state differs from one process to the next (and the
        # trials of one search set it): each search here starts from another one.
        random.seed(state)
        assert tune(TINY_TUNE + ["--output", str(tmp_path / name)]) == 0
        trials = json.loads((tmp_path / name / "trials.json").read_text())["trials"]
        # In the order tried (trial ids are 00, 01), not ranked.
        chosen.append([t["hyperparameters"] for t in sorted(trials,
                                                             key=lambda t: t["trial_id"])])
    assert len(chosen[0]) == 2 and chosen[0] == chosen[1]
    oracle = tmp_path / "first" / "random" / "oracle.json"
    damage(oracle, "garble")
    capsys.readouterr()
    assert tune(TINY_TUNE + ["--output", str(tmp_path / "first")]) == 2
    assert "is damaged" in one_error_line(capsys, str(oracle))


def test_damaged_bytes_in_a_history_skip_their_line_in_the_curve(tmp_path):
    from compgen_tf.experiments.results import validation_curve

    history = tmp_path / "history.jsonl"
    history.write_bytes(b'{"step": 5, "val_accuracy": 0.5}\n{"step": \xff\xfe}\n'
                        b'{"step": 10, "val_accuracy": 1.0}\n')
    assert validation_curve(history) == [[5, 0.5], [10, 1.0]]


class Killed(BaseException):
    """What SIGKILL does to a run, as an exception nothing in the library catches."""


def test_a_run_killed_while_recording_an_evaluation_repeats_it(tmp_path, monkeypatch):
    from compgen_tf.training import callbacks

    straight, killed = tmp_path / "straight", tmp_path / "killed"
    last = TINY + ["--set", "training.selection=last"]  # every evaluation saves the best model
    assert train.main(last + ["--output", str(straight)]) == 0
    append = callbacks.append_history

    def killed_at_10(run_dir, record):  # step 10's evaluation made, not yet recorded
        if record["step"] == 10:
            raise Killed()
        append(run_dir, record)

    monkeypatch.setattr(callbacks, "append_history", killed_at_10)
    with pytest.raises(Killed):
        train.main(last + ["--output", str(killed)])
    monkeypatch.undo()
    assert train.main(last + ["--output", str(killed)]) == 0
    # Step 10's evaluation is in the history, as in the run never killed (it resumed from
    # step 5's checkpoint, not from one of step 10 written before its evaluation was
    # recorded, marked unfinished).
    assert ([json.loads(line)["step"] for line in open(killed / "history.jsonl")]
            == [5, 10])
    for a, b in zip(weights_of(straight), weights_of(killed)):
        assert (a == b).all()


def test_a_full_disk_while_evaluating_is_one_line(tmp_path, capsys, monkeypatch):
    import errno

    from compgen_tf.experiments import experiment

    run_dir = tmp_path / "run"
    assert train.main(TINY + ["--output", str(run_dir)]) == 0
    before = (run_dir / "metrics.json").read_text()

    def full(run_dir, metrics):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(run_dir / "metrics.json"))

    monkeypatch.setattr(experiment, "write_metrics", full)
    capsys.readouterr()
    assert evaluate.main(["--run", str(run_dir)]) == 2
    assert "No space left on device" in one_error_line(capsys, "metrics.json")
    assert (run_dir / "metrics.json").read_text() == before
