"""Search spaces of `python -m compgen_tf tune`: the file, its checks, a trial's configuration.

A search space (`configs/<model>/search_space.json`, or any file given with
`--search-space`) is a JSON object mapping `section.key` to a spec:

    {"notes": "where the ranges come from",
     "model_args.hidden_units": {"type": "int", "min": 32, "max": 256, "step": 32},
     "model_args.dropout": {"type": "float", "min": 0.0, "max": 0.5, "step": 0.1},
     "training.learning_rate": {"type": "choice", "values": [0.0003, 0.001, 0.003]},
     "training.jit_compile": {"type": "boolean"}}

`int` and `float` take `min`, `max` and optionally `step` and `sampling` (`linear`, `log`,
`reverse_log`). `load_search_space` reads and checks a file (key names against the model's
arguments and the configuration schema, spec fields, bounds, and, given a base
configuration, that the values at both ends of every range are accepted);
`apply_hyperparameters` gives a trial's configuration. keras-tuner itself is not imported
here: its side is `compgen_tf.experiments.tune`.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

from compgen_tf import registry
from compgen_tf.experiments.kinds import experiment_for
from compgen_tf.experiments.config import (CONFIG_DIR, DATA_KEYS, SECTIONS, TRAINING_KEYS,
                                           ConfigError, validate_config)

SEARCH_SPACE_FILE = "search_space.json"
SPEC_FIELDS = {"int": {"type", "min", "max", "step", "sampling"},
               "float": {"type", "min", "max", "step", "sampling"},
               "choice": {"type", "values"},
               "boolean": {"type"}}
SAMPLINGS = ("linear", "log", "reverse_log")
# Trial values are rounded to this many digits where they are recorded: a stepped float range
# gives values such as 3 * 0.1 = 0.30000000000000004.
FLOAT_DIGITS = 10


class SearchSpaceError(ConfigError):
    """A search space file that cannot be used."""


def search_space_path(model: str) -> Path:
    """The committed search space of `model`: `configs/<model>/search_space.json`."""
    return CONFIG_DIR / model / SEARCH_SPACE_FILE


def load_search_space(path, model: str, base_config: dict | None = None) -> dict:
    """Reads and validates a search space file; returns `{section.key: spec}` (no notes).

    `base_config`: a resolved configuration of `model` (with its split or task), whose
    values at both ends of every range are then checked too."""
    path = Path(path)
    if not path.exists():
        raise SearchSpaceError(f"search space file {path} does not exist (expected a JSON "
                               f"object mapping SECTION.KEY to a spec)")
    try:
        space = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise SearchSpaceError(f"{path} is not valid JSON: {error}") from error
    return validate_search_space(space, model, base_config, origin=str(path))


def validate_search_space(space, model: str, base_config: dict | None = None,
                          origin: str = "search space") -> dict:
    """Checks key names, spec types and bounds; with `base_config`, also that the
    configuration (and the model) accept the values at both ends of every range."""
    if not isinstance(space, dict):
        raise SearchSpaceError(f"{origin}: a search space is a JSON object mapping "
                               f"SECTION.KEY to a spec")
    if "notes" in space and not isinstance(space["notes"], str):
        raise SearchSpaceError(f"{origin}: 'notes' must be a string")
    specs = {name: spec for name, spec in space.items() if name != "notes"}
    if not specs:
        raise SearchSpaceError(f"{origin}: no hyperparameters to search")
    spec = registry.spec(model)
    task = (base_config[experiment_for(spec).task_key] if base_config and "model" in base_config
            else spec.tasks[0])
    valid_keys = {"model_args": experiment_for(spec).model_arg_names(model, task),
                  "training": set(TRAINING_KEYS), "data": set(DATA_KEYS)}
    for name, spec in specs.items():
        section, dot, key = name.partition(".")
        where = f"{origin}: {name}"
        if not dot or section not in SECTIONS or not key:
            raise SearchSpaceError(f"{where}: keys look like SECTION.KEY with SECTION one of "
                                   f"{list(SECTIONS)}")
        if key not in valid_keys[section]:
            raise SearchSpaceError(f"{where}: {key!r} is not a {section} key of model "
                                   f"{model!r}; valid keys: {sorted(valid_keys[section])}")
        _check_spec(spec, where)
    if base_config is not None:
        _check_values_accepted(specs, model, base_config, origin)
    return specs


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_spec(spec, where):
    if not isinstance(spec, dict) or "type" not in spec:
        raise SearchSpaceError(f"{where}: a spec is an object with a 'type' "
                               f"(one of {sorted(SPEC_FIELDS)})")
    kind = spec["type"]
    if kind not in SPEC_FIELDS:
        raise SearchSpaceError(f"{where}: unknown type {kind!r}; expected one of "
                               f"{sorted(SPEC_FIELDS)}")
    unknown = set(spec) - SPEC_FIELDS[kind]
    if unknown:
        raise SearchSpaceError(f"{where}: unknown field(s) {sorted(unknown)} for type "
                               f"{kind!r}; allowed: {sorted(SPEC_FIELDS[kind])}")
    if kind in ("int", "float"):
        for field in ("min", "max"):
            if field not in spec:
                raise SearchSpaceError(f"{where}: type {kind!r} needs '{field}'")
        low, high, step = spec["min"], spec["max"], spec.get("step")
        wanted = (lambda v: isinstance(v, int) and not isinstance(v, bool)) if kind == "int" \
            else _is_number
        for field, value in (("min", low), ("max", high), ("step", step)):
            if value is not None and not wanted(value):
                raise SearchSpaceError(f"{where}: '{field}' must be "
                                       f"{'an integer' if kind == 'int' else 'a number'}, "
                                       f"got {value!r}")
        if not low < high:
            raise SearchSpaceError(f"{where}: bad bounds: min ({low}) must be below max "
                                   f"({high})")
        sampling = spec.get("sampling", "linear")
        if sampling not in SAMPLINGS:
            raise SearchSpaceError(f"{where}: unknown sampling {sampling!r}; expected one of "
                                   f"{list(SAMPLINGS)}")
        if sampling != "linear" and low <= 0:
            raise SearchSpaceError(f"{where}: bad bounds: {sampling} sampling needs min > 0, "
                                   f"got {low}")
        if step is not None:
            if step <= 0:
                raise SearchSpaceError(f"{where}: bad step {step}: must be positive")
            if sampling == "linear" and step > high - low:
                raise SearchSpaceError(f"{where}: bad step {step}: larger than max - min "
                                       f"({high - low}), so only min could be drawn")
            if sampling != "linear" and step <= 1:
                raise SearchSpaceError(f"{where}: bad step {step}: with {sampling} sampling "
                                       f"the step is a factor and must be > 1")
    elif kind == "choice":
        values = spec.get("values")
        if not isinstance(values, list) or len(values) < 2:
            raise SearchSpaceError(f"{where}: 'values' must be a list of at least 2 values")
        if len({json.dumps(v) for v in values}) != len(values):
            raise SearchSpaceError(f"{where}: 'values' has duplicates: {values}")
        kinds = {_value_kind(v) for v in values}
        if None in kinds or len(kinds) != 1:
            raise SearchSpaceError(f"{where}: 'values' must all be integers, all numbers, all "
                                   f"strings or all booleans, got {values}")


def _value_kind(value):
    if isinstance(value, bool):
        return "bool"
    if _is_number(value):
        return "number"
    if isinstance(value, str):
        return "str"
    return None


def _candidate_values(spec) -> list:
    kind = spec["type"]
    if kind in ("int", "float"):
        return [spec["min"], spec["max"]]
    if kind == "choice":
        return list(spec["values"])
    return [False, True]


def _check_values_accepted(specs, model, base_config, origin):
    """Every value at the ends of each range must pass the config schema and the model."""
    model_spec = registry.spec(model)
    experiment = experiment_for(model_spec)
    for name, spec in specs.items():
        section, _, key = name.partition(".")
        for value in _candidate_values(spec):
            config = copy.deepcopy(base_config)
            config[section][key] = value
            config.setdefault("model", model)
            config.setdefault(experiment.task_key, model_spec.tasks[0])
            try:
                config = experiment.run_config(config, origin="configuration")
                if section == "model_args":
                    experiment.check_model_values(config)
            except (ConfigError, ValueError, TypeError) as error:
                raise SearchSpaceError(f"{origin}: {name}: the value {value!r} in its range is "
                                       f"rejected: {error}") from error


def searched_values(values: dict) -> dict:
    """The hyperparameter values of a trial, without keras-tuner's own `tuner/...` entries."""
    return {name: (round(value, FLOAT_DIGITS) if isinstance(value, float) else value)
            for name, value in values.items() if not name.startswith("tuner/")}


def apply_hyperparameters(config: dict, values: dict) -> dict:
    """`config` with each `section.key` value of a trial set; validated."""
    config = copy.deepcopy(config)
    for name, value in searched_values(values).items():
        section, _, key = name.partition(".")
        config[section][key] = value
    return validate_config(config, origin="trial configuration")
