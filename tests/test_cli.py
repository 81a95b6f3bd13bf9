"""`python -m compgen_tf <command>`: one entry point for every tool, quiet TensorFlow start-up."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from compgen_tf import cli, names
from compgen_tf.cli import error_analysis, train

ROOT = Path(__file__).resolve().parents[1]
# What TensorFlow prints at start-up on this CPU when nothing silences it.
START_UP_LINES = ("oneDNN custom operations", "cpu_feature_guard")


def test_help_lists_every_command_and_unknown_ones_are_refused(capsys):
    assert cli.main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in cli.COMMANDS:
        assert f"  {name} " in out
    assert cli.main([]) == 2
    assert cli.main(["trian"]) == 2
    assert "unknown command 'trian'" in capsys.readouterr().err


@pytest.mark.parametrize("command", sorted(cli.COMMANDS))
def test_every_command_runs_its_modules_main(command, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main([command, "--help"])
    assert exit_.value.code == 0
    assert "usage:" in capsys.readouterr().out


def run(args, **env):
    environment = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    return subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True,
                          env={**environment, **env}, timeout=300)


def test_tensorflow_start_up_lines_are_hidden_unless_verbose(tmp_path):
    missing = str(tmp_path)  # a directory, but no run: evaluate imports TensorFlow, then refuses
    quiet = run(["-m", "compgen_tf", "evaluate", "--run", missing])
    assert quiet.returncode == 2
    assert not any(line in quiet.stderr for line in START_UP_LINES), quiet.stderr
    assert quiet.stderr.strip().splitlines()[-1].startswith("error: ")
    verbose = run(["-m", "compgen_tf", "evaluate", "--run", missing, "--verbose"])
    assert verbose.returncode == 2
    assert verbose.stderr.strip().splitlines()[-1].startswith("error: ")
    if not any(line in verbose.stderr for line in START_UP_LINES):
        pytest.skip("this TensorFlow build prints none of the start-up lines to hide")


def test_train_module_is_the_train_command_and_a_plain_import_registers_the_models():
    """`python -m compgen_tf.train` (`make train`) is `python -m compgen_tf train`, named so
    in its usage like every other command; a library import registers the models for
    `.keras` loading."""
    for entry in (["-m", "compgen_tf.train"], ["-m", "compgen_tf", "train"]):
        shown = run([*entry, "--help"])
        assert shown.returncode == 0
        assert shown.stdout.startswith("usage: python -m compgen_tf train "), shown.stdout[:80]
        refused = run([*entry, "--model", "nope"])
        assert refused.returncode == 2
        assert refused.stderr.splitlines() == [
            "python -m compgen_tf train: error: argument --model: unknown model 'nope'; "
            "choose from: " + ", ".join(names.MODELS)], refused.stderr
    imported = run(["-c", "import sys, compgen_tf; print('compgen_tf.models' in sys.modules)"])
    assert imported.returncode == 0 and imported.stdout.strip() == "True", imported.stderr


def test_console_script_is_installed():
    script = Path(sys.executable).with_name("compgen-tf")
    if not script.exists():
        pytest.skip("the package is not installed in this environment (make install)")
    result = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "reproduce" in result.stdout


# A TensorFlow log line ("I0000 00:00:1796177396.556114    8421 file.cc:396] ...") and the
# other lines TensorFlow 2.21 prints on its own.
TF_LOG_LINE = re.compile(r"^[IWEF]\d{4} [\d:.]+ +\d+ \S+:\d+\] .*$", re.MULTILINE)
TF_OTHER_LINES = ("absl::InitializeLog", "To enable the following instructions",
                  "oneDNN custom operations", "oneDNN supports DT_INT64")


def test_a_train_run_into_a_log_file_is_plain_lines_and_no_tensorflow_log(tmp_path):
    """Redirected, `train` writes one plain line per evaluation (no carriage return,
    backspace or escape code; step/max_steps, loss, validation score) and its stderr has
    none of TensorFlow's runtime or start-up log lines (issue 69, items 6 and 8)."""
    result = run(["-m", "compgen_tf", "train", "--model", "mlp_baseline", "--task",
                  "rule_learning", "--steps", "10", "--set", "training.eval_every=5",
                  "--output", str(tmp_path / "run")])
    assert result.returncode == 0, result.stderr
    steps = [line.split()[1] for line in result.stdout.splitlines() if line.startswith("step ")]
    wrong = {"control codes in stdout": [code for code in ("\r", "\b", "\x1b")
                                         if code in result.stdout],
             "evaluation lines": [] if steps == ["5/10", "10/10"] else steps,
             "TensorFlow log lines on stderr": TF_LOG_LINE.findall(result.stderr)
             + [line for line in TF_OTHER_LINES if line in result.stderr]}
    assert not any(wrong.values()), (wrong, result.stdout, result.stderr)
    assert re.search(r"^step 10/10  loss \d\.\d{4}  val_accuracy \d\.\d{4}", result.stdout, re.M)


def _quiet_setting(env_value, *argv):
    """TF_CPP_MIN_LOG_LEVEL after a command line's start, in a process of its own."""
    code = ("import os, sys; sys.argv = ['-m']; from compgen_tf import cli; "
            f"cli.quiet_tensorflow_logs({list(argv)!r}); "
            "print(os.environ.get('TF_CPP_MIN_LOG_LEVEL'), 'tensorflow' in sys.modules)")
    result = run(["-c", code], **({} if env_value is None else {"TF_CPP_MIN_LOG_LEVEL": env_value}))
    assert result.returncode == 0, result.stderr
    return result.stdout.split()


def test_tensorflow_log_level_is_set_before_import_unless_the_user_chose_one():
    assert _quiet_setting(None) == ["3", "False"]
    assert _quiet_setting("0") == ["0", "False"]  # the user's choice stays
    assert _quiet_setting(None, "--verbose") == ["None", "False"]


def test_help_and_refused_arguments_do_not_import_tensorflow():
    """`--help` of every command (and of `reproduce --check`), and a mistyped model or
    split, answer without importing TensorFlow (4-7 s otherwise)."""
    code = """
import contextlib, io, sys
sys.argv = ['-m']
from compgen_tf import cli
for argv in ([['--help']] + [[command, '--help'] for command in cli.COMMANDS]
             + [['reproduce', '--check', 'x.json', '--help'],
                ['train', '--model', 'nope'], ['train', '--split', 'nope'],
                ['reproduce', '--model', 'nope', '--split', 'simple'],
                ['tune', '--model', 'nope', '--split', 'simple']]):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            cli.main(argv)
        except SystemExit:
            pass
    print(' '.join(argv), 'tensorflow' in sys.modules)
"""
    result = run(["-c", code])
    assert result.returncode == 0, result.stderr
    assert [line for line in result.stdout.splitlines() if line.endswith("True")] == []


def test_an_unknown_model_or_split_is_one_line_and_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_:
        train.main(["--model", "seq2sqe"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err == (
        "python -m compgen_tf train: error: argument --model: unknown model 'seq2sqe'; "
        "choose from: " + ", ".join(names.MODELS) + "\n")
    with pytest.raises(SystemExit) as exit_:
        train.main(["--split", "adprim_jump"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown split 'adprim_jump'; nearest: addprim_jump" in err
    assert "--help lists them all" in err
    with pytest.raises(SystemExit) as exit_:
        train.main(["--steps", "many"])
    assert exit_.value.code == 2 and capsys.readouterr().err.count("\n") == 1


def test_errors_of_a_missing_run_directory_says_so(tmp_path, capsys):
    missing = tmp_path / "no_such_run"
    assert error_analysis.main(["--run", str(missing)]) == 2
    assert capsys.readouterr().err == f"error: run directory {missing} does not exist\n"


def test_the_names_offered_without_tensorflow_are_the_registry_s():
    import tfds_scan
    from compgen_tf import registry
    from compgen_tf.training import distribute

    assert names.MODELS == {name: spec.trains_on for name, spec in registry.MODELS.items()}
    assert names.TASKS == {name: spec.tasks for name, spec in registry.MODELS.items()
                           if spec.trains_on != "scan"}
    assert names.SCAN_SPLITS == tfds_scan.CONFIG_NAMES
    assert names.MT_SPLITS == tfds_scan.MT_CONFIG_NAMES
    assert names.VALIDATION_CARVES == tfds_scan.VALIDATION_CARVES
    assert names.COGS_SPLITS == tfds_scan.COGS_CONFIG_NAMES
    scan_tasks = set().union(*(spec.tasks for spec in registry.MODELS.values()
                               if spec.trains_on == "scan"))
    assert set(names.SPLITS) == scan_tasks
    assert distribute.STRATEGIES is names.STRATEGIES
