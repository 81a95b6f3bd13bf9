"""Was a committed seed trained by today's code? The recorded numerics changes, asked per seed.

`compgen_tf/resources/numerics_changes.json` lists the commits that changed what a seed
trains to (its initial draws, its loss or train step, its data order or batching, the
decoding its evaluation and model selection use), each with the registered models it
affects and, when only some of their configurations are affected, the `model_args` keys
that make a configuration one of them (e.g. `length_head`). Refactors shown to give the same
numbers are not listed (`results/checks/*same_numbers*.json`).
`tests/test_registry.py` guards the list: it compares every registered model's losses
before and after a short fit with `tests/fixtures/numerics_fingerprints.json`, and a change
that moves them must come with an entry here.

`code_state(model, config, commit)` says whether a seed trained at `commit` ran today's
numerics: "current" (no listed change that affects it lies between its commit and the
checkout's HEAD), "changed" (with those changes) or "unknown" (no commit recorded, no git
checkout to ask -- an installed wheel -- or a commit the checkout does not have).
`results_state(document)` asks it for every seed of a results file.

Example:
    >>> state = code_state("seq2seq", None, None)
    >>> state.state, state.reason
    ('unknown', 'no commit recorded')
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import json
import re
import subprocess
from pathlib import Path

from compgen_tf import resources
from compgen_tf.versions import checkout_root

CHANGES_FILE = resources.path("numerics_changes.json")
STATES = ("current", "changed", "unknown")
_FULL_HASH = re.compile(r"[0-9a-f]{40}")
# What a run directory adds to the commit it ran at when its tracked files differed.
_CHANGES_SUFFIX = "+changes"


@dataclasses.dataclass(frozen=True)
class NumericsChange:
    """One commit that changed what seeds of some models train to.

    Attributes:
        commit: its full hash.
        date: its date (ISO, `YYYY-MM-DD`).
        models: the registered model names it affects.
        configs: None when every configuration of those models is affected; otherwise the
            `model_args` keys of which at least one must be set (not absent, None, False,
            0 or empty) for a configuration to be affected.
        what: one line.
        splits: None when runs on every split are affected; otherwise the splits whose
            runs are (a change to how some data is scored).
        introduced: None for a change of what the code does; for the fix of a fault, the
            commit that brought the fault in: a seed that ran before it ran without the
            fault, and is not affected.
    """

    commit: str
    date: str
    models: tuple
    configs: tuple | None
    what: str
    splits: tuple | None = None
    introduced: str | None = None

    def affects(self, model: str, config: dict | None, split: str | None = None) -> bool:
        """Whether a run of `model` under `config` (a results file's `config`; None when
        not recorded, which counts as affected) on `split` (None when not known, which
        counts as affected) is affected.

        Args:
            model: the registered model name.
            config: the run's configuration, with its `model_args` section.
            split: the run's split.

        Returns:
            True when the change applies to that run.
        """
        if model not in self.models:
            return False
        if self.splits is not None and split is not None and split not in self.splits:
            return False
        if self.configs is None or config is None:
            return True
        model_args = config.get("model_args") or {}
        return any(model_args.get(key) not in (None, False, 0, "", [], {})
                   for key in self.configs)


@dataclasses.dataclass(frozen=True)
class CodeState:
    """Whether a seed ran today's numerics (`code_state`).

    Attributes:
        state: "current", "changed" or "unknown".
        commit: the commit the seed ran at (without "+changes"), or None.
        changes: the listed changes it did not run with (for "changed"), oldest first.
        reason: one line saying why.
    """

    state: str
    commit: str | None
    changes: tuple = ()
    reason: str = ""


@dataclasses.dataclass(frozen=True)
class ResultsState:
    """`code_state` of every seed of a results file (`results_state`).

    Attributes:
        state: "changed" when any seed is, else "unknown" when any seed is, else "current".
        seeds: {seed: CodeState}, by seed.
        changes: the changes that make any seed "changed", oldest first, each once.
    """

    state: str
    seeds: dict
    changes: tuple = ()

    def seeds_in(self, state: str) -> list:
        """The seeds whose state is `state`, in order."""
        return [seed for seed, code in self.seeds.items() if code.state == state]


def load_changes(path=None) -> tuple[NumericsChange, ...]:
    """The recorded numerics changes, checked, oldest first.

    Args:
        path: the list to read (default: the package's `numerics_changes.json`).

    Returns:
        The changes as `NumericsChange`s.

    Raises:
        ValueError: an entry without a full commit hash, an ISO date, a list of models or
            a line saying what changed, or with keys the schema does not have.
    """
    return _load_changes(str(path or CHANGES_FILE))


@functools.lru_cache(maxsize=8)
def _load_changes(path: str) -> tuple[NumericsChange, ...]:
    entries = json.loads(Path(path).read_text())
    if not isinstance(entries, list):
        raise ValueError(f"{path}: a list of changes expected")
    changes = []
    for index, entry in enumerate(entries):
        where = f"{path}: entry {index}"
        if not isinstance(entry, dict):
            raise ValueError(f"{where} is not an object")
        unknown = set(entry) - {"commit", "date", "models", "configs", "what", "splits",
                                "introduced"}
        if unknown:
            raise ValueError(f"{where} has unknown keys {sorted(unknown)}")
        if not _FULL_HASH.fullmatch(str(entry.get("commit", ""))):
            raise ValueError(f"{where}: 'commit' must be a full 40-digit hash, got "
                             f"{entry.get('commit')!r}")
        try:
            datetime.date.fromisoformat(str(entry.get("date")))
        except ValueError:
            raise ValueError(f"{where}: 'date' must be an ISO date, got "
                             f"{entry.get('date')!r}") from None
        models, configs = entry.get("models"), entry.get("configs")
        if not (isinstance(models, list) and models and all(isinstance(m, str) for m in models)):
            raise ValueError(f"{where}: 'models' must be a non-empty list of model names")
        if configs is not None and not (isinstance(configs, list) and configs
                                        and all(isinstance(c, str) for c in configs)):
            raise ValueError(f"{where}: 'configs' must be a non-empty list of model_args keys")
        if not isinstance(entry.get("what"), str) or not entry["what"].strip():
            raise ValueError(f"{where}: 'what' must say what changed")
        splits, introduced = entry.get("splits"), entry.get("introduced")
        if splits is not None and not (isinstance(splits, list) and splits
                                       and all(isinstance(x, str) for x in splits)):
            raise ValueError(f"{where}: 'splits' must be a non-empty list of split names")
        if introduced is not None and not _FULL_HASH.fullmatch(str(introduced)):
            raise ValueError(f"{where}: 'introduced' must be a full 40-digit hash, got "
                             f"{introduced!r}")
        changes.append(NumericsChange(entry["commit"], entry["date"], tuple(models),
                                      tuple(configs) if configs else None, entry["what"],
                                      tuple(splits) if splits else None, introduced))
    return tuple(sorted(changes, key=lambda change: change.date))


def code_state(model: str, config: dict | None, commit: str | None, repo_dir=None,
               changes=None, split: str | None = None) -> CodeState:
    """Whether a seed of `model` under `config` trained at `commit` ran today's numerics.

    A listed change counts when it affects the model, configuration and split, is in the
    checkout's HEAD (today's code) and is not an ancestor of (nor) `commit`
    (`git merge-base --is-ancestor`; the answers are cached); a fault's fix counts only
    when the commit that brought the fault in (`introduced`) is an ancestor of `commit`.

    Args:
        model: the registered model name.
        config: the configuration the seed ran with (a results file's `config`), or None.
        commit: the commit recorded for the seed, with or without "+changes" (a run of a
            checkout with uncommitted edits counts as a run of the commit), or None.
        repo_dir: the git checkout to ask (default: the one this package runs from).
        changes: the list to use (default: `load_changes()`).
        split: the split the seed ran on, or None (not known).

    Returns:
        A `CodeState`.
    """
    if not commit:
        return CodeState("unknown", None, reason="no commit recorded")
    base = commit[:-len(_CHANGES_SUFFIX)] if commit.endswith(_CHANGES_SUFFIX) else commit
    root = Path(repo_dir) if repo_dir is not None else checkout_root()
    if root is None:
        return CodeState("unknown", base, reason="no git checkout to ask (an installed package)")
    relevant = [change for change in (load_changes() if changes is None else changes)
                if change.affects(model, config, split)]
    later = []
    for change in relevant:
        in_today = _is_ancestor(str(root), change.commit, "HEAD")
        in_run = _is_ancestor(str(root), change.commit, base)
        had_fault = (True if change.introduced is None
                     else _is_ancestor(str(root), change.introduced, base))
        if in_today is None or in_run is None or had_fault is None:
            # git answers for a commit it has: the change's, then the run's, then the fault's.
            missing = (change.commit if in_today is None else base if in_run is None
                       else change.introduced)
            return CodeState("unknown", base,
                             reason=f"the checkout does not have commit {missing[:12]}")
        if in_today and not in_run and had_fault:
            later.append(change)
    if later:
        return CodeState("changed", base, tuple(later),
                         reason="trained before " + ", ".join(
                             f"{change.commit[:7]} ({change.date})" for change in later))
    return CodeState("current", base, reason="no recorded numerics change since its commit")


@functools.lru_cache(maxsize=4096)
def _is_ancestor(root: str, ancestor: str, descendant: str) -> bool | None:
    """Whether `ancestor` is `descendant` or one of its ancestors; None when git cannot
    tell (a commit it does not have, no git)."""
    try:
        answer = subprocess.run(["git", "-C", root, "merge-base", "--is-ancestor", ancestor,
                                 descendant], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return {0: True, 1: False}.get(answer.returncode)


def recorded_commit(document: dict, run: dict) -> str | None:
    """The commit a seed of a results file ran at: its own `commit`, else the file's
    `versions.commit` (files whose runs did not record one), else None."""
    return run.get("commit") or document.get("versions", {}).get("commit")


def results_state(document: dict, repo_dir=None, changes=None) -> ResultsState:
    """`code_state` of every seed of a results file (`compgen_tf.experiments.results`).

    Args:
        document: the results file's contents.
        repo_dir, changes: as `code_state`'s.

    Returns:
        A `ResultsState`: "changed" when any seed is (`seeds_in("changed")` lists them),
        else "unknown" when any seed is, else "current".
    """
    seeds = {run["seed"]: code_state(document["model"], document.get("config"),
                                     recorded_commit(document, run), repo_dir, changes,
                                     document.get("split"))
             for run in sorted(document["runs"], key=lambda run: run["seed"])}
    states = {code.state for code in seeds.values()}
    state = ("changed" if "changed" in states else "unknown" if "unknown" in states
             else "current")
    found = {}
    for code in seeds.values():
        for change in code.changes:
            found.setdefault((change.commit, change.models, change.configs), change)
    return ResultsState(state, seeds, tuple(sorted(found.values(), key=lambda c: c.date)))
