"""`python -m compgen_tf <command>`: one entry point for every tool, quiet TensorFlow start-up."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from compgen_tf import cli

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
    missing = str(tmp_path / "no_such_run")
    quiet = run(["-m", "compgen_tf", "evaluate", "--run", missing])
    assert quiet.returncode == 2
    assert not any(line in quiet.stderr for line in START_UP_LINES), quiet.stderr
    assert quiet.stderr.strip().splitlines()[-1].startswith("error: ")
    verbose = run(["-m", "compgen_tf", "evaluate", "--run", missing, "--verbose"])
    assert verbose.returncode == 2
    assert verbose.stderr.strip().splitlines()[-1].startswith("error: ")
    if not any(line in verbose.stderr for line in START_UP_LINES):
        pytest.skip("this TensorFlow build prints none of the start-up lines to hide")


def test_train_module_hides_start_up_lines_and_a_plain_import_registers_the_models():
    """`python -m compgen_tf.train` (`make train`) is as quiet as `python -m compgen_tf`; a
    library import leaves stderr alone and registers the models for `.keras` loading."""
    quiet = run(["-m", "compgen_tf.train", "--model", "nope"])
    assert quiet.returncode == 2
    assert not any(line in quiet.stderr for line in START_UP_LINES), quiet.stderr
    assert quiet.stderr.strip().splitlines()[-1].startswith(
        "python -m compgen_tf.train: error: argument --model: invalid choice: 'nope'")
    imported = run(["-c", "import sys, compgen_tf; print('compgen_tf.models' in sys.modules)"])
    assert imported.returncode == 0 and imported.stdout.strip() == "True", imported.stderr


def test_console_script_is_installed():
    script = Path(sys.executable).with_name("compgen-tf")
    if not script.exists():
        pytest.skip("the package is not installed in this environment (make install)")
    result = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "reproduce" in result.stdout
