"""Experiment configurations: JSON files under `configs/`, overridable from the command line.

The committed files are package data (`compgen_tf.resources`, `CONFIG_DIR`): a model's
default configuration is found by name from any directory, in a checkout or an installed
wheel; `--config PATH` reads any other file.

A configuration has four sections:

- `model_args`: keyword arguments of the model class;
- `training`: optimisation and model-selection settings (`TrainingConfig`, `TRAINING_KEYS`);
- `data`: how the data are drawn and validation is carved from train (`DataConfig`, `DATA_KEYS`);
- `notes`: free text, where each value comes from;
- `provenance`: how the settings were chosen, `{"kind", "reason"}` with `kind` one of
  `PROVENANCE_KINDS`. Results files copy it, and the report labels every row with it.

A variant names the file it changes, `"base": "default.json"` (a path relative to its own
folder), and holds only what differs, with notes on why: the resolved configuration is the
base's with the variant's keys laid over it section by section, and the notes of both. Notes
and provenance are documentation: two configurations that differ only in them are the same
configuration (`comparable`). Provenance is not inherited: a variant is a new choice, and one
that does not say how it was chosen is recorded as `unrecorded_provenance`.

This module reads files; the keys, types, defaults and ranges of the settings are those of
the dataclasses `TrainingConfig` and `DataConfig`, and a run reads a `RunConfig`
(`compgen_tf.experiments.run_config`, made by `Experiment.resolve_config`).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from compgen_tf import resources
from compgen_tf.errors import ConfigError  # noqa: F401  (defined low: the registry raises it too)
from compgen_tf.experiments.run_config import (DATA_KEYS, DataConfig,  # noqa: F401
                                               normalised_sections)
from compgen_tf.training.settings import SELECTIONS, TRAINING_KEYS, TrainingConfig  # noqa: F401

# The committed configurations: package data, the repository's top-level `configs/`.
CONFIG_DIR = resources.path("configs")

SECTIONS = ("model_args", "training", "data")
DOCUMENTATION_KEYS = ("notes", "provenance")

# How a configuration's settings were chosen, and how the report labels its results.
PROVENANCE_KINDS = {
    "faithful": "faithful",
    # The paper's setup where the paper and the authors' code give it, with differences that
    # remain (named in the reason): initialization, a detail of the architecture, data.
    "closest": "closest to the paper",
    "validation": "variant (chosen on validation)",
    "post-hoc": "variant (chosen after test scores were seen)",
}


def unrecorded_provenance(why: str) -> dict:
    """The provenance of settings whose choice is not on record: treated as post-hoc, since
    nothing shows that no test score was seen first."""
    return {"kind": "post-hoc", "reason": f"not recorded: {why}"}


def config_path(model: str, split: str) -> Path:
    """The committed configuration of `model` on `split`, falling back to the model's default
    (for the English-French configs `mt_*`: to the model's `mt.json`, then its default; for a
    data folder, the model's default)."""
    from tfds_scan.folder_pairs import is_folder
    from tfds_scan.mt import CONFIG_NAMES as MT_CONFIG_NAMES

    names = [split, "mt", "default"] if split in MT_CONFIG_NAMES else [split, "default"]
    if is_folder(split):  # a data folder: the model's default (its path names no file here)
        names = ["default"]
    for candidate in [CONFIG_DIR / model / f"{name}.json" for name in names]:
        if candidate.exists():
            return candidate
    raise ConfigError(f"no configuration for model {model!r}: expected {CONFIG_DIR / model}/"
                      f"{split}.json or default.json")


def load_config(path: str | Path) -> dict:
    """Reads a configuration file, resolves its `base` chain and validates the result."""
    return validate_config(_resolve(Path(path), ()), origin=str(path))


def _resolve(path: Path, chain: tuple) -> dict:
    if not path.exists():
        where = f" (the base of {chain[-1]})" if chain else ""
        raise ConfigError(f"configuration file {path}{where} does not exist")
    if path.resolve() in chain:
        raise ConfigError(f"{path}: its bases form a cycle: "
                          + " -> ".join(str(p) for p in chain + (path.resolve(),)))
    try:
        config = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ConfigError(f"{path} is not valid JSON: {error}") from error
    if not isinstance(config, dict):
        raise ConfigError(f"{path}: a configuration is a JSON object")
    if "base" not in config:
        return config
    base_name = config.pop("base")
    if not isinstance(base_name, str):
        raise ConfigError(f"{path}: 'base' must be a file name, got {base_name!r}")
    base = _resolve(path.parent / base_name, chain + (path.resolve(),))
    merged = copy.deepcopy(base)
    merged.pop("provenance", None)  # not inherited: the variant is a choice of its own
    for section in SECTIONS:
        for origin, part in ((path.parent / base_name, base), (path, config)):
            if section in part and not isinstance(part[section], dict):
                raise ConfigError(f"{origin}: section {section!r} must be an object")
        if section in config:
            merged.setdefault(section, {}).update(config[section])
    for key, value in config.items():
        if key not in SECTIONS and key != "notes":
            merged[key] = value
    if config.get("notes"):
        merged["notes"] = (f"{base['notes']} Variant ({path.name}): {config['notes']}"
                           if base.get("notes") else config["notes"])
    return merged


def comparable(config):
    """`config` without its notes and provenance, at any depth: what two configurations
    must share to be the same (run directories, results files and searches compare this)."""
    if isinstance(config, dict):
        return {k: comparable(v) for k, v in config.items() if k not in DOCUMENTATION_KEYS}
    return config


def validate_config(config: dict, origin: str = "configuration") -> dict:
    """Checks section names, key names, value types and ranges; returns a normalised copy."""
    config = normalised_config(config, origin)
    # The ranges, by the classes that hold them; which decay key applies is known only once
    # the kind of experiment is (`Experiment.run_config`, which builds them for the run).
    TrainingConfig.from_section(config["training"], drops_once=None, origin=origin)
    DataConfig.from_section(config["data"], origin=origin)
    return config


def normalised_config(config: dict, origin: str = "configuration") -> dict:
    """Checks section names, key names and value types (not ranges: `validate_config`);
    returns a normalised copy."""
    if not isinstance(config, dict):
        raise ConfigError(f"{origin}: a configuration is a JSON object")
    config = copy.deepcopy(config)
    unknown = set(config) - set(SECTIONS) - set(DOCUMENTATION_KEYS) - {"model", "split", "task"}
    if unknown:
        raise ConfigError(f"{origin}: unknown section(s) {sorted(unknown)}; "
                          f"expected {list(SECTIONS)}, 'notes' and 'provenance'")
    if "provenance" in config:
        check_provenance(config["provenance"], origin)
    for section in SECTIONS:
        if not isinstance(config.setdefault(section, {}), dict):
            raise ConfigError(f"{origin}: section {section!r} must be an object")
    return normalised_sections(config, origin)


def check_provenance(provenance, origin: str = "provenance") -> dict:
    """A `ConfigError` unless `provenance` is `{"kind": one of PROVENANCE_KINDS, "reason": text}`."""
    if (not isinstance(provenance, dict) or set(provenance) != {"kind", "reason"}
            or provenance["kind"] not in PROVENANCE_KINDS
            or not isinstance(provenance["reason"], str) or not provenance["reason"].strip()):
        raise ConfigError(f"{origin}: provenance must be {{\"kind\": one of "
                          f"{list(PROVENANCE_KINDS)}, \"reason\": a non-empty line}}, "
                          f"got {provenance!r}")
    return provenance


def apply_overrides(config: dict, overrides: list[str]) -> dict:
    """Applies `section.key=value` overrides (value parsed as JSON, else kept as a string)."""
    config = copy.deepcopy(config)
    for override in overrides:
        name, sep, raw = override.partition("=")
        section, dot, key = name.partition(".")
        if not sep or not dot or section not in SECTIONS or not key:
            raise ConfigError(f"override {override!r} must look like SECTION.KEY=VALUE with "
                              f"SECTION one of {list(SECTIONS)}")
        try:
            value = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        config[section][key] = value
    return validate_config(config, origin="command-line override")


def config_differences(old: dict, new: dict, prefix: str = "") -> list[str]:
    """The nested keys whose values differ, as "section.key: old -> new" lines."""
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += config_differences(a, b, f"{prefix}{key}.")
        elif a != b:
            out.append(f"{prefix}{key}: {a!r} -> {b!r}")
    return out
