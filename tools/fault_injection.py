"""Fault injection for issue 69: kill -9 at seeded random moments of a short run, damaged
files of a run directory, of a results file and of a `tune` search, and a full disk.

    python tools/fault_injection.py --kills 20 --seed 0 --out results/checks/fault_injection.json

What it does (the JSON it writes says the same, with every command):

1. The reference: a short SCAN run (seq2seq on the composition split, 8 units, 60 steps,
   validated every 20, checkpointed every 10, `training.selection last` so that the best
   model is the run's last weights and every step shows in it) trained uninterrupted.
2. Kills: the same `train` command into a fresh directory, killed (SIGKILL) at a seeded
   random moment (uniform over the reference's time after it took the lock) after it has
   taken the run directory's lock (so, while training), then
   the same command again, killed again at another random moment, ... (`--kills-per-run`
   kills a directory), then run to its end. Its `best_model.keras` weights must be
   bit-identical to the reference's and its `metrics.json` accuracies equal.
   Each moment is classified from what the run directory held when the process died
   (approximate, see `moment_kind`): "start-up" (the lock not yet taken: reading data,
   building the model), "checkpoint write" (a file being written aside, or a checkpoint or
   the best model written in the last 0.5 s), "evaluation" (the next checkpoint ends an
   evaluation and the steps before it should be done, judged by the reference's time per
   10 steps), else "steps".
3. Damage: each file of a finished run directory (checkpoint data, index and list,
   best_model.keras, config.json, metrics.json, history.jsonl, the vocabulary files) cut to
   half ("truncate") or 16 bytes in its middle overwritten with bytes that are not UTF-8
   ("garble"), in a copy of the reference; then `evaluate --run` and the same `train`. The
   checkpoint files and history.jsonl also in a copy made unfinished (metrics.json removed).
   A results file (written by `reproduce`) damaged: `report --check` and `reproduce` again.
   A `tune` search's oracle.json and a trial.json damaged: the same `tune` again.
4. A full disk (`full_disk`): small tmpfs mounts (where mounting is allowed), and a patched
   write (a sitecustomize making Python's writes into the run directory fail with ENOSPC
   once its first checkpoint exists); then the same command with space again.

Outcomes: "fallback" (exit 0 and the reference's result), "clear error" (exit 2 and exactly
one stderr line, naming the damaged file), "traceback" (a Python traceback, or exit 1),
"silently wrong" (exit 0 and another result), "unclear error" (any other failure). A fault
is survived when its outcome is a fallback or a clear error; `lost` counts results lost:
killed runs whose resumed result differs from the reference, and silently wrong results.

TensorFlow's own C++ log lines (absl's "I0000 ..." form) are not counted as stderr lines:
they are TensorFlow's, printed whatever the library does (TF_CPP_MIN_LOG_LEVEL=3 is set).

By default each command runs in a child forked from this process after it imported the
library (`--exec` runs `python -m compgen_tf ...` instead): on a loaded machine importing
TensorFlow takes most of a short run's time. The child runs exactly what
`python -m compgen_tf` runs (`compgen_tf.cli.main(argv)`), an uncaught exception printed
with its traceback and exit status 1 as Python does; the reference always runs with
`--exec` too, and the killed runs' results are compared with it.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

import compgen_tf

# Where the imported package lives (the checkout's root when run from one): the faulted
# commands run as subprocesses and must import this same package.
ROOT = Path(compgen_tf.__file__).resolve().parent.parent
TRAIN = ["train", "--model", "seq2seq", "--split", "composition", "--steps", "60",
         "--set", "model_args.embedding_dim=8", "--set", "model_args.hidden_units=8",
         "--set", "training.eval_every=20", "--set", "training.checkpoint_every=10",
         "--set", "training.selection=last", "--set", "training.jit_compile=false",
         "--evaluate-splits", "validation", "test", "--quiet"]
TUNE = ["tune", "--model", "mlp_baseline", "--task", "rule_learning", "--tuner", "random",
        "--max-trials", "2", "--steps", "4", "--seed", "0", "--quiet"]
REPRODUCE = ["reproduce", "--model", "seq2seq", "--split", "composition", "--seeds", "1",
             "--steps", "20", "--set", "model_args.embedding_dim=8",
             "--set", "model_args.hidden_units=8", "--set", "training.eval_every=10",
             "--set", "training.checkpoint_every=10", "--set", "training.jit_compile=false",
             "--quiet"]
# absl's log lines (TensorFlow's C++ logging): "I0000 00:00:1796179650.874449   32001 port.cc"
TF_LOG = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+ \S+:\d+\]|^WARNING: All log "
                    r"messages before absl::InitializeLog")
ENV = {"TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(ROOT),
       "TF_NUM_INTRAOP_THREADS": "1", "TF_NUM_INTEROP_THREADS": "1"}


# ---------------------------------------------------------------------------- commands

class Runner:
    """Starts a command of `python -m compgen_tf` (forked, or `exec`ed with `--exec`) with
    its stdout and stderr in files; waits for it or kills it."""

    def __init__(self, workdir: Path, exec_mode: bool):
        self.workdir, self.exec_mode, self.count = workdir, exec_mode, 0
        if not exec_mode:
            from compgen_tf import cli

            cli.import_tensorflow_quietly([])

    def start(self, argv, exec_mode=None, env=None):
        """Starts `argv`; returns (pid, stdout file, stderr file)."""
        self.count += 1
        out = self.workdir / "logs" / f"{self.count:03d}.out"
        err = out.with_suffix(".err")
        out.parent.mkdir(parents=True, exist_ok=True)
        exec_mode = self.exec_mode if exec_mode is None else exec_mode
        if exec_mode or env:
            with open(out, "w") as o, open(err, "w") as e:
                process = subprocess.Popen([sys.executable, "-m", "compgen_tf", *argv],
                                           stdout=o, stderr=e, cwd=ROOT,
                                           env={**os.environ, **ENV, **(env or {})})
            return process, out, err
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: what `python -m compgen_tf ARGV` runs
            code = 1
            try:
                flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
                o, e = os.open(out, flags, 0o644), os.open(err, flags, 0o644)
                os.dup2(o, 1)
                os.dup2(e, 2)
                from compgen_tf import cli

                sys.argv = ["compgen_tf", *argv]
                code = cli.main(list(argv))
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else 1
            except BaseException:  # noqa: BLE001 (printed as the interpreter would)
                traceback.print_exc()
                code = 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        return pid, out, err

    # Exit statuses of forked children already reaped by `alive`, for `wait`.
    _codes: dict = {}

    @staticmethod
    def alive(handle) -> bool:
        if isinstance(handle, subprocess.Popen):
            return handle.poll() is None
        if handle in Runner._codes:
            return False
        done, status = os.waitpid(handle, os.WNOHANG)
        if done:
            Runner._codes[handle] = status
        return not done

    @staticmethod
    def wait(handle) -> int:
        if isinstance(handle, subprocess.Popen):
            return handle.wait()
        if handle in Runner._codes:
            status = Runner._codes.pop(handle)
        else:
            _, status = os.waitpid(handle, 0)
        return os.waitstatus_to_exitcode(status)

    @staticmethod
    def kill(handle) -> None:
        os.kill(handle.pid if isinstance(handle, subprocess.Popen) else handle, signal.SIGKILL)

    @staticmethod
    def pid(handle) -> int:
        return handle.pid if isinstance(handle, subprocess.Popen) else handle

    def run(self, argv, exec_mode=None, env=None) -> dict:
        """Runs `argv` to its end: {"exit_code", "stderr_lines", "traceback", "seconds"}."""
        started = time.perf_counter()
        handle, out, err = self.start(argv, exec_mode, env)
        code = self.wait(handle)
        return {"exit_code": code, **stderr_of(err),
                "seconds": round(time.perf_counter() - started, 1)}


def stderr_of(path: Path) -> dict:
    """The stderr lines of a command less TensorFlow's C++ log lines, and whether it holds
    a traceback."""
    text = path.read_text(errors="replace")
    lines = [line for line in text.splitlines() if line.strip() and not TF_LOG.match(line)]
    return {"stderr_lines": lines, "traceback": "Traceback (most recent call last)" in text}


# ---------------------------------------------------------------------------- results

def weights(run_dir: Path):
    """The weights of a run's best model, as arrays in the order of their names in the
    .keras file's `model.weights.h5` (None when it cannot be read). Read with h5py, not
    Keras: this process forks the commands, and TensorFlow must not start its threads here."""
    import io
    import zipfile

    import h5py

    arrays = []
    try:
        with zipfile.ZipFile(run_dir / "best_model.keras") as archive:
            data = archive.read("model.weights.h5")
        with h5py.File(io.BytesIO(data), "r") as weights_file:
            weights_file.visititems(lambda name, item: arrays.append((name, item[()]))
                                    if isinstance(item, h5py.Dataset) else None)
    except Exception:  # noqa: BLE001 (a damaged file: no result)
        return None
    return [array for _, array in sorted(arrays, key=lambda pair: pair[0])]


def result_of(run_dir: Path):
    """(metrics' accuracies, best-model weights) of a run directory."""
    try:
        accuracy = json.loads((run_dir / "metrics.json").read_text())["accuracy"]
    except Exception:  # noqa: BLE001
        accuracy = None
    return accuracy, weights(run_dir)


def same_result(a, b) -> bool:
    if a[0] is None or b[0] is None or a[1] is None or b[1] is None or a[0] != b[0]:
        return False
    return len(a[1]) == len(b[1]) and all(x.shape == y.shape and (x == y).all()
                                          for x, y in zip(a[1], b[1]))


def outcome(ran: dict, file_name: str | None, same: bool | None) -> str:
    """The class of a command's end after a fault (see the module's docstring)."""
    if ran["traceback"] or ran["exit_code"] == 1:
        return "traceback"
    if ran["exit_code"] == 0:
        return "fallback" if same in (True, None) else "silently wrong"
    if (ran["exit_code"] == 2 and len(ran["stderr_lines"]) == 1
            and (file_name is None or file_name in ran["stderr_lines"][0])):
        return "clear error"
    return "unclear error"


SURVIVED = ("fallback", "clear error")


def record(kind, file, how, command, ran, result, **extra) -> dict:
    lines = ran["stderr_lines"]
    return {"kind": kind, "file": file, "how": how, "command": "python -m compgen_tf "
            + " ".join(command), "outcome": result, "exit_code": ran["exit_code"],
            "stderr_last_line": lines[-1] if lines else "", "stderr_lines": len(lines),
            "seconds": ran["seconds"], **extra}


# ---------------------------------------------------------------------------- damage

def damage(path: Path, how: str, rng: random.Random) -> None:
    """Cuts `path` to half ("truncate"), or overwrites 16 bytes at a seeded place in its
    middle half with bytes that are not UTF-8 ("garble")."""
    data = path.read_bytes()
    if how == "truncate":
        path.write_bytes(data[:len(data) // 2])
        return
    start = rng.randrange(len(data) // 4, max(len(data) // 4 + 1, 3 * len(data) // 4 - 16))
    noise = bytes(rng.choice(range(0x80, 0x100)) for _ in range(16))
    path.write_bytes(data[:start] + noise + data[start + 16:])


def run_dir_faults(runner, reference_dir, reference, workdir, rng) -> list[dict]:
    """Each file of a run directory damaged in a copy of the reference (finished), and the
    checkpoints and history in a copy made unfinished; `evaluate --run` and `train`."""
    faults = []
    checkpoints = sorted((reference_dir / "checkpoints").iterdir())
    newest = max(int(p.name.split("-")[1].split(".")[0]) for p in checkpoints
                 if p.name.startswith("ckpt-"))
    files = {"checkpoint data": f"checkpoints/ckpt-{newest}.data-00000-of-00001",
             "checkpoint index": f"checkpoints/ckpt-{newest}.index",
             "checkpoint list": "checkpoints/checkpoint",
             "best model": "best_model.keras", "config": "config.json",
             "metrics": "metrics.json", "history": "history.jsonl",
             "source vocabulary": "source_vocabulary.json",
             "target vocabulary": "target_vocabulary.json"}
    unfinished_kinds = ("checkpoint data", "checkpoint index", "checkpoint list", "history")
    for state in ("finished", "unfinished"):
        for kind, name in files.items():
            if state == "unfinished" and kind not in unfinished_kinds:
                continue
            for how in ("truncate", "garble"):
                run_dir = workdir / "damaged" / f"{state}_{name.replace('/', '_')}_{how}"
                shutil.copytree(reference_dir, run_dir)
                if state == "unfinished":
                    (run_dir / "metrics.json").unlink()
                damage(run_dir / name, how, rng)
                commands = ([["evaluate", "--run", str(run_dir), "--splits", "validation",
                              "test"]] if state == "finished" else [])
                commands.append(TRAIN + ["--output", str(run_dir)])
                for command in commands:
                    ran = runner.run(command)
                    same = (same_result(result_of(run_dir), reference)
                            if ran["exit_code"] == 0 else None)
                    faults.append(record(f"damaged run file ({state} run)", name, how,
                                         command, ran, outcome(ran, Path(name).name, same)))
                    print(f"  {state} {name} {how} {command[0]}: {faults[-1]['outcome']}",
                          flush=True)
    return faults


def results_faults(runner, workdir, rng) -> list[dict]:
    """A results file written by `reproduce`, damaged: `report --check`, and `reproduce`
    again (which reads it to add its seeds)."""
    faults = []
    base = workdir / "results_run"
    command = REPRODUCE + ["--runs-dir", str(base / "runs"), "--results-dir",
                           str(base / "results")]
    ran = runner.run(command)
    if ran["exit_code"] != 0:
        return [record("results file", None, "setup", command, ran, "setup failed")]
    path = base / "results" / "seq2seq" / "composition.json"
    pristine = path.read_bytes()
    for how in ("truncate", "garble"):
        path.write_bytes(pristine)
        damage(path, how, rng)
        for again in (["report", "--results-dir", str(base / "results"), "--check"], command):
            ran = runner.run(again)
            faults.append(record("results file", str(path.relative_to(workdir)), how, again,
                                 ran, outcome(ran, path.name, None if ran["exit_code"]
                                              else False)))
            print(f"  results {how} {again[0]}: {faults[-1]['outcome']}", flush=True)
    return faults


def tune_faults(runner, workdir, rng) -> list[dict]:
    """A two-trial search's oracle.json and a trial.json, damaged: the same `tune` again."""
    faults = []
    output = workdir / "tune"
    command = TUNE + ["--output", str(output)]
    ran = runner.run(command)
    if ran["exit_code"] != 0:
        return [record("tune directory", None, "setup", command, ran, "setup failed")]
    trial = sorted((output / "random").glob("trial_*/trial.json"))[0].relative_to(output)
    for name in ("random/oracle.json", str(trial)):
        for how in ("truncate", "garble"):
            copy = workdir / "tune_damaged" / f"{name.replace('/', '_')}_{how}"
            shutil.copytree(output, copy)
            damage(copy / name, how, rng)
            again = TUNE + ["--output", str(copy)]
            ran = runner.run(again)
            # A search that completes again is a fallback only if it keeps its trials.
            same = (json.loads((copy / "trials.json").read_text())
                    == json.loads((output / "trials.json").read_text())
                    if ran["exit_code"] == 0 else None)
            faults.append(record("tune directory", name, how, again, ran,
                                 outcome(ran, Path(name).name, same)))
            print(f"  tune {name} {how}: {faults[-1]['outcome']}", flush=True)
    return faults


# ---------------------------------------------------------------------------- full disk

SITECUSTOMIZE = '''
# Written by tools/fault_injection.py: the disk of FAULT_FULL_DIR is full once its first
# checkpoint exists. Patched: Python's open() for writing or appending, and os.replace
# into that directory (everything the library writes in Python: the best model through
# Keras' zip writer, config.json, metrics.json, history.jsonl, the vocabularies).
# Not patched: TensorFlow's C++ writers (checkpoints, TensorBoard event files).
import builtins, errno, io, os
_full_dir = os.path.realpath(os.environ["FAULT_FULL_DIR"])
_open, _io_open, _replace = builtins.open, io.open, os.replace

def _full(path):
    try:
        path = os.path.realpath(os.fspath(path))
    except TypeError:
        return False
    return (path.startswith(_full_dir + os.sep) and
            os.path.exists(os.path.join(_full_dir, "checkpoints", "checkpoint")))

def _check(file, mode):
    if any(c in mode for c in "wax+") and _full(file):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), os.fspath(file))

def open(file, mode="r", *args, **kwargs):
    if isinstance(file, (str, bytes, os.PathLike)):
        _check(file, mode)
    return _open(file, mode, *args, **kwargs)

def replace(src, dst, *args, **kwargs):
    if _full(dst):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), os.fspath(dst))
    return _replace(src, dst, *args, **kwargs)

builtins.open = io.open = open
os.replace = replace
'''


def full_disk(runner, reference, workdir) -> list[dict]:
    """A run whose disk fills after its first checkpoint: one clear line, then (space
    freed) the same command resumes from the last good checkpoint to the reference's
    result. A small tmpfs is tried first; where mounting is refused, a patched write."""
    faults = []
    # On a tmpfs of SIZE the run's own files fill it: 160k leaves no room for the best
    # model of step 20 (a Python write, Keras' zip file), 232k none for the checkpoint of
    # step 20 (TensorFlow's C++ writer); then it is remounted larger and the same command
    # run again. Sizes from the reference's files (checkpoint 57 KiB, best model 109 KiB).
    for size in ("160k", "232k"):
        mount = workdir / f"tmpfs_{size}"
        mount.mkdir(parents=True, exist_ok=True)
        tried = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs",
                                str(mount)], capture_output=True, text=True)
        tmpfs = {"command": f"mount -t tmpfs -o size={size} tmpfs {mount}",
                 "exit_code": tried.returncode,
                 "stderr": (tried.stderr.strip().splitlines() or [""])[-1]}
        if tried.returncode != 0:
            faults.append({"kind": "full disk", "file": None, "how": f"tmpfs of {size}",
                           "outcome": "not tried", "tmpfs": tmpfs})
            print(f"  tmpfs refused: {tmpfs['stderr']}", flush=True)
            continue
        try:
            command = TRAIN + ["--output", str(mount / "run")]
            ran = runner.run(command)
            full = outcome(ran, None, False)
            if full == "clear error" and "No space left" not in ran["stderr_lines"][0]:
                full = "unclear error"
            faults.append(record("full disk", f"tmpfs_{size}/run", f"tmpfs of {size}",
                                 command, ran, full, tmpfs=tmpfs))
            print(f"  full tmpfs {size}: {full}: {faults[-1]['stderr_last_line']}", flush=True)
            subprocess.run(["mount", "-o", "remount,size=16m", str(mount)], check=True)
            again = runner.run(command)
            same = (same_result(result_of(mount / "run"), reference)
                    if again["exit_code"] == 0 else None)
            faults.append(record("full disk, space freed", f"tmpfs_{size}/run",
                                 "remounted at 16m, same command again", command, again,
                                 outcome(again, None, same)))
            print(f"  after it: {faults[-1]['outcome']}", flush=True)
        finally:
            subprocess.run(["umount", str(mount)])
    tmpfs = {"note": "the patched write runs wherever tmpfs works or not"}
    run_dir = workdir / "full_disk"
    patch = workdir / "full_disk_patch"
    patch.mkdir(parents=True, exist_ok=True)
    (patch / "sitecustomize.py").write_text(SITECUSTOMIZE)
    command = TRAIN + ["--output", str(run_dir)]
    env = {"PYTHONPATH": f"{patch}{os.pathsep}{ROOT}", "FAULT_FULL_DIR": str(run_dir)}
    ran = runner.run(command, exec_mode=True, env=env)
    full = outcome(ran, None, False)
    if full == "clear error" and "No space left" not in ran["stderr_lines"][0]:
        full = "unclear error"
    faults.append(record("full disk", str(run_dir.name), "patched write (ENOSPC)", command,
                         ran, full, tmpfs=tmpfs))
    print(f"  full disk: {full}", flush=True)
    again = runner.run(command)
    same = same_result(result_of(run_dir), reference) if again["exit_code"] == 0 else None
    faults.append(record("full disk, space freed", str(run_dir.name), "same command again",
                         command, again, outcome(again, None, same)))
    print(f"  after the full disk: {faults[-1]['outcome']}", flush=True)
    return faults


# ---------------------------------------------------------------------------- kills

def checkpoint_times(run_dir: Path, started: float, seen: dict) -> None:
    """Records (in `seen`) when each checkpoint index first appeared, in seconds after
    `started`."""
    for index in (run_dir / "checkpoints").glob("ckpt-*.index") if (
            run_dir / "checkpoints").exists() else ():
        step = int(index.name.split("-")[1].split(".")[0])
        seen.setdefault(step, time.perf_counter() - started)


def holds_lock(run_dir: Path, pid: int) -> bool:
    try:
        return (run_dir / ".lock").read_text().strip() == str(pid)
    except OSError:
        return False


def moment_kind(run_dir: Path, pid: int, step_seconds: float, since_checkpoint: float) -> str:
    """What a run killed just now was doing, judged from its directory (approximate: see
    the module's docstring)."""
    if not holds_lock(run_dir, pid):
        return "start-up"
    now = time.time()
    # Being written: files written aside (a killed writer's stay behind: only recent ones
    # count), checkpoints and the best model written in the last 0.5 s.
    written = [p for p in run_dir.rglob("*") if "partial" in p.name or "_temp" in p.name
               or "tempstate" in p.name or p.parent.name == "checkpoints"
               or p.name == "best_model.keras"]
    if any(p.exists() and now - p.stat().st_mtime < 0.5 for p in written):
        return "checkpoint write"
    steps = [int(p.name.split("-")[1].split(".")[0])
             for p in (run_dir / "checkpoints").glob("ckpt-*.index")]
    if 60 in steps:  # trained: the final scoring of validation and test
        return "evaluation"
    upcoming = (max(steps) if steps else 0) + 10
    if upcoming % 20 == 0 and since_checkpoint > step_seconds:
        return "evaluation"
    return "steps"


# The moments drawn that came after the run had ended (drawn again in a new directory).
MISSED = []


def kills(runner, reference, reference_seconds, step_seconds, workdir, rng, n, per_run):
    """`n` kills, `per_run` a run directory, each followed by the same command."""
    faults, chain = [], 0
    while len(faults) < n:
        run_dir = workdir / "killed" / f"run{chain}"
        command = TRAIN + ["--output", str(run_dir)]
        chain_faults = []
        while len(chain_faults) < per_run and len(faults) + len(chain_faults) < n:
            handle, _, err = runner.start(command)
            pid = runner.pid(handle)
            while runner.alive(handle) and not holds_lock(run_dir, pid):
                time.sleep(0.05)
            delay = rng.uniform(0.0, reference_seconds)
            locked, seen = time.perf_counter(), {}
            while runner.alive(handle) and time.perf_counter() - locked < delay:
                checkpoint_times(run_dir, locked, seen)
                time.sleep(0.05)
            if not runner.alive(handle):  # it ended before its moment came
                runner.wait(handle)
                MISSED.append(round(delay, 2))
                break
            last = max(seen.values()) if seen else 0.0
            runner.kill(handle)
            runner.wait(handle)
            kind = moment_kind(run_dir, pid, step_seconds, time.perf_counter() - locked - last)
            chain_faults.append({"kind": "kill -9", "file": str(run_dir.relative_to(workdir)),
                                 "how": f"SIGKILL {delay:.2f} s after the lock was taken",
                                 "moment": kind, "command": "python -m compgen_tf "
                                 + " ".join(command)})
            print(f"  kill {len(faults) + len(chain_faults)}: {run_dir.name} after "
                  f"{delay:.1f} s ({kind})", flush=True)
        ran = runner.run(command)  # the same command, to the end
        same = same_result(result_of(run_dir), reference) if ran["exit_code"] == 0 else None
        result = outcome(ran, None, same)
        if result == "clear error":  # a killed run must resume, not stop
            result = "unclear error"
        for fault in chain_faults:
            lines = ran["stderr_lines"]
            fault.update(outcome=result, exit_code=ran["exit_code"],
                         stderr_last_line=lines[-1] if lines else "",
                         stderr_lines=len(lines), seconds=ran["seconds"],
                         resumed_best_model_bit_identical=bool(same))
        print(f"  run{chain} resumed to its end: {result}", flush=True)
        faults.extend(chain_faults)
        chain += 1
    return faults


# ---------------------------------------------------------------------------- main

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kills", type=int, default=20, help="kill -9 faults (default: 20)")
    parser.add_argument("--kills-per-run", type=int, default=4,
                        help="kills of one run directory before it runs to its end")
    parser.add_argument("--seed", type=int, default=0, help="seed of the moments and damage")
    parser.add_argument("--out", default="results/checks/fault_injection.json")
    parser.add_argument("--workdir", default="/tmp/fault_injection",
                        help="scratch folder (emptied first)")
    parser.add_argument("--exec", action="store_true", dest="exec_mode",
                        help="run each command as `python -m compgen_tf` (default: forked)")
    parser.add_argument("--skip", nargs="*", default=[],
                        choices=["kills", "damage", "results", "tune", "full_disk"])
    args = parser.parse_args(argv)
    for name, value in ENV.items():
        os.environ[name] = value
    workdir = Path(args.workdir)
    shutil.rmtree(workdir, ignore_errors=True)
    workdir.mkdir(parents=True)
    rng = random.Random(args.seed)
    started = time.perf_counter()
    runner = Runner(workdir, args.exec_mode)

    print("reference run (python -m compgen_tf, uninterrupted)", flush=True)
    reference_dir = workdir / "reference"
    timing = {}
    handle, _, err = runner.start(TRAIN + ["--output", str(reference_dir)], exec_mode=True)
    pid = runner.pid(handle)
    while runner.alive(handle) and not holds_lock(reference_dir, pid):
        time.sleep(0.05)
    locked = time.perf_counter()
    while runner.alive(handle):
        checkpoint_times(reference_dir, locked, timing)
        time.sleep(0.05)
    ran = {"exit_code": runner.wait(handle), **stderr_of(err)}
    reference_seconds = time.perf_counter() - locked
    if ran["exit_code"] != 0:
        print("\n".join(ran["stderr_lines"][-5:]), file=sys.stderr)
        return 1
    reference = result_of(reference_dir)
    # Steps 20-30 and 40-50 end in no evaluation: their time is that of 10 steps.
    plain = [timing[b] - timing[a] for a, b in ((20, 30), (40, 50)) if a in timing and b in timing]
    step_seconds = sum(plain) / len(plain) if plain else reference_seconds / 6
    print(f"  {reference_seconds:.1f} s after the lock; 10 steps {step_seconds:.1f} s; "
          f"accuracy {reference[0]}", flush=True)

    sections = {"kills": lambda: kills(runner, reference, reference_seconds, step_seconds,
                                       workdir, rng, args.kills, args.kills_per_run),
                "damage": lambda: run_dir_faults(runner, reference_dir, reference, workdir,
                                                 rng),
                "results": lambda: results_faults(runner, workdir, rng),
                "tune": lambda: tune_faults(runner, workdir, rng),
                "full_disk": lambda: full_disk(runner, reference, workdir)}
    faults, errors = [], []
    for name, section in sections.items():
        if name in args.skip:
            continue
        print(name, flush=True)
        try:
            faults += section()
        except Exception:  # noqa: BLE001 (the tool's own failure: recorded, the rest runs)
            errors.append({"section": name, "traceback": traceback.format_exc()})
            print(errors[-1]["traceback"], file=sys.stderr, flush=True)
        write(args, argv, started, reference_seconds, step_seconds, reference, faults, errors)
    totals = write(args, argv, started, reference_seconds, step_seconds, reference, faults,
                   errors)
    print(f"wrote {args.out}: "
          f"{json.dumps({k: totals[k] for k in ('tried', 'survived', 'lost', 'tracebacks')})}")
    return 0 if totals["lost"] == 0 and totals["tracebacks"] == 0 and not errors else 1


def write(args, argv, started, reference_seconds, step_seconds, reference, faults, errors):
    """Writes the JSON report (after each section, so that a stopped run leaves its part);
    returns its totals."""
    counted = [f for f in faults if f["outcome"] not in ("setup failed", "not tried")]
    totals = {"tried": len(counted),
              "survived": sum(f["outcome"] in SURVIVED for f in counted),
              "lost": sum(f["outcome"] == "silently wrong" or (f["kind"] == "kill -9" and
                          not f.get("resumed_best_model_bit_identical")) for f in counted),
              "tracebacks": sum(f["outcome"] == "traceback" for f in counted),
              "by_outcome": {o: sum(f["outcome"] == o for f in counted)
                             for o in sorted({f["outcome"] for f in counted})},
              "kill_moments": {m: sum(f.get("moment") == m for f in counted)
                               for m in sorted({f["moment"] for f in counted if "moment" in f})},
              "kill_moments_after_the_run_ended": len(MISSED)}
    import platform

    from compgen_tf.versions import package_versions

    document = {
        "command": "python tools/fault_injection.py " + " ".join(
            sys.argv[1:] if argv is None else argv),
        "what": "see tools/fault_injection.py's docstring: outcomes, how moments are "
                "classified, what the full disk patches",
        "train_command": "python -m compgen_tf " + " ".join(TRAIN) + " --output DIR",
        "mode": "exec" if args.exec_mode else "fork (reference exec)",
        "reference": {"seconds_after_lock": round(reference_seconds, 1),
                      "ten_steps_seconds": round(step_seconds, 2),
                      "accuracy": reference[0]},
        "machine": {"load_average": os.getloadavg(), "cpus": os.cpu_count(),
                    "python": platform.python_version()},
        "versions": package_versions(),
        "wall_time_s": round(time.perf_counter() - started, 1),
        "totals": totals, "faults": faults}
    document["tool_errors"] = errors
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=1) + "\n")
    return totals


if __name__ == "__main__":
    sys.exit(main())
