"""`RunConfig`: one run's configuration, typed, resolved and validated once.

A configuration file (`compgen_tf.experiments.config`) is JSON: sections of settings, a `base`
it inherits from, notes and provenance. `Experiment.resolve_config` reads it, applies the
command line, and builds a `RunConfig`: the model and its task, the model's arguments, a
`TrainingConfig` and a `DataConfig` with every default filled in (those of the kind of
experiment), checked once. Everything a run does reads this object; `config.json` in the
run directory is its `to_json()`, written once, as a record.

`to_json()` holds the settings as given (the file's and the command line's keys, normalised),
not the defaults: a default that changes does not make two records of the same configuration
differ, and the records of runs trained before `RunConfig` existed compare equal.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping

from compgen_tf.errors import ConfigError
from compgen_tf.names import VALIDATION_CARVES
from compgen_tf.sections import normalised_section, section_keys, typed_section
from compgen_tf.training.settings import TrainingConfig


@dataclasses.dataclass(frozen=True)
class DataConfig:
    """The `data` section of a run's configuration, resolved: how the data are drawn and how
    validation is carved from the training data.

    Attributes:
        validation_fraction: the share of the training examples held out for validation.
        validation_seed: with the run's seed, the draw of that carve.
        length_bucket: SCAN batches group examples whose commands' lengths fall in the same
            bucket of this width.
        validation_carve: SCAN runs: "random" or "tail" (`compgen_tf.names.VALIDATION_CARVES`).
        train_size, test_size: the toy palindrome tasks: sizes of the generated sets.
        validation_episodes: meta seq2seq: episodes carved for validation.
        test_support_sets: meta seq2seq's length tasks: support sets each test query is
            scored against (their mean).
        folder_sha256: a run on a data folder (`tfds_scan.folder_pairs`): the SHA-256 of
            its files, recorded when the run is configured and checked whenever the
            configuration is read back (a changed folder is refused).
    """

    validation_fraction: float = 0.1
    validation_seed: int = 0
    length_bucket: int = 8
    validation_carve: str = "random"
    train_size: int = 100_000
    test_size: int = 1_000
    validation_episodes: int = 20
    test_support_sets: int = 1
    folder_sha256: str | None = None

    def __post_init__(self):
        if not 0.0 < self.validation_fraction < 1.0:
            raise ValueError("data.validation_fraction must be in (0, 1)")
        if self.validation_carve not in VALIDATION_CARVES:
            raise ValueError(f"data.validation_carve must be one of {list(VALIDATION_CARVES)}, "
                             f"got {self.validation_carve!r}")

    @classmethod
    def from_section(cls, section: Mapping = (), origin: str = "configuration"):
        """The settings of a `data` section (a JSON object); a `ConfigError` names a bad one."""
        return typed_section(cls, dict(section), "data", origin)


def as_data_config(data) -> DataConfig:
    """`data` itself when it is a `DataConfig`; a mapping of its keys resolved over the class
    defaults (a tool or a test that reads a split the way a run does)."""
    return data if isinstance(data, DataConfig) else DataConfig.from_section(data or {})


DATA_KEYS = section_keys(DataConfig)
"""{key: type} of the settings a configuration's `data` section may hold."""

# The sections of settings, and their classes (`model_args` is the model's own: its keys are
# checked against the model class, `Experiment.check_model_args`).
SECTION_CLASSES = {"training": TrainingConfig, "data": DataConfig}


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """A run's configuration: what trains, on what, with which settings, and how they were
    chosen.

    Made by `Experiment.resolve_config` (a file and the command line) or
    `Experiment.run_config` (a dict in the configuration file's form); frozen: a change is a
    new configuration (`with_training`).

    Attributes:
        model: the registered model's name.
        task: the SCAN split, episode task or toy task it trains on.
        task_key: the key that names the task in the JSON form: "split" or "task".
        model_args: keyword arguments of the model's `from_words` (or builder).
        training: the resolved `TrainingConfig`.
        data: the resolved `DataConfig`.
        given: {"training": ..., "data": ...}: the settings as the file and the command line
            gave them, normalised (what `to_json` records).
        notes: where the values come from (free text), or None.
        provenance: how the settings were chosen, {"kind", "reason"}.
    """

    model: str
    task: str
    task_key: str
    model_args: Mapping
    training: TrainingConfig
    data: DataConfig
    given: Mapping
    notes: str | None = None
    provenance: Mapping | None = None

    def to_json(self, seed: int | None = None) -> dict:
        """The configuration file's form: {"model_args", "training", "data", "model",
        <task_key>, ["notes"], ["provenance"], ["seed"]}, what `config.json` holds."""
        out = {"model_args": copy.deepcopy(dict(self.model_args)),
               "training": dict(self.given["training"]), "data": dict(self.given["data"])}
        if self.notes is not None:
            out["notes"] = self.notes
        if self.provenance is not None:
            out["provenance"] = dict(self.provenance)
        out.update({"model": self.model, self.task_key: self.task})
        if seed is not None:
            out["seed"] = seed
        return out

    def with_training(self, **changes) -> "RunConfig":
        """This configuration with `changes` to its training settings (given, so recorded)."""
        given = {**self.given["training"], **changes}
        # Over every resolved value: a key given as null keeps what it resolved to.
        resolved = {field.name: getattr(self.training, field.name)
                    for field in dataclasses.fields(self.training)
                    if not field.metadata.get("internal")}
        training = TrainingConfig.from_section(given, defaults=resolved,
                                               drops_once=self.training.drops_once)
        return dataclasses.replace(self, training=training,
                                   given={**self.given, "training": given})


def normalised_sections(config: dict, origin: str) -> dict:
    """`config` with each settings section's values coerced to their types (unknown keys and
    wrong types refused); ranges are checked when a `RunConfig` is built."""
    config = dict(config)
    for name, cls in SECTION_CLASSES.items():
        config[name] = normalised_section(cls, config.get(name, {}), name, origin)
    if not isinstance(config.setdefault("model_args", {}), Mapping):
        raise ConfigError(f"{origin}: section 'model_args' must be an object")
    return config
