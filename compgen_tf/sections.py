"""Typed configuration sections: a frozen dataclass per section of a run's configuration.

A section of a configuration file is a JSON object of settings (`training`, `data`). Its
dataclass is the one place where each key, its type and its default are written: the keys a
file may set are the dataclass's fields (`section_keys`), and `typed_section` turns a JSON
object into an instance, with one `ConfigError` naming the first key or value it refuses.
"""

from __future__ import annotations

import dataclasses
import typing
from collections.abc import Mapping

from compgen_tf.errors import ConfigError

# The types a setting can have in JSON; `X | None` means the key may be null.
_SCALARS = (bool, int, float, str)


def section_keys(cls) -> dict:
    """{key: its scalar type} of the settings dataclass `cls` (fields that a file can set)."""
    hints = typing.get_type_hints(cls)
    keys = {}
    for field in dataclasses.fields(cls):
        if not field.init or field.metadata.get("internal"):
            continue
        kind = hints[field.name]
        options = [a for a in typing.get_args(kind) if a is not type(None)] or [kind]
        keys[field.name] = options[0]
    return keys


def coerce(value, kind, where: str):
    """`value` as `kind` (int, float, bool or str); None stays None. A whole float is an int,
    an int is a float, a bool is neither; anything else is a `ConfigError` naming `where`."""
    if value is None:
        return None
    if kind is int and isinstance(value, float) and value.is_integer():
        value = int(value)
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if kind is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be true or false, got {value!r}")
        return value
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ConfigError(f"{where} must be {kind.__name__}, got {value!r}")
    return value


def normalised_section(cls, section, name: str, origin: str) -> dict:
    """`section` (a JSON object) with every value coerced to its key's type; a `ConfigError`
    for an unknown key or a value of the wrong type."""
    if not isinstance(section, Mapping):
        raise ConfigError(f"{origin}: section {name!r} must be an object")
    keys = section_keys(cls)
    out = {}
    for key, value in section.items():
        if key not in keys:
            raise ConfigError(f"{origin}: unknown key {name}.{key}; valid keys: {sorted(keys)}")
        out[key] = coerce(value, keys[key], f"{origin}: {name}.{key}")
    return out


def typed_section(cls, section, name: str, origin: str, defaults: Mapping = (), **internal):
    """An instance of `cls` from the JSON object `section` over `defaults`.

    A key set to null takes its default, as if absent. `internal` sets fields that no file
    sets (those with `metadata={"internal": True}`). The instance's `__post_init__` checks
    ranges; its `ValueError` comes back as a `ConfigError` prefixed with `origin`.
    """
    given = normalised_section(cls, section, name, origin)
    values = {**dict(defaults), **{k: v for k, v in given.items() if v is not None}}
    try:
        return cls(**values, **internal)
    except ValueError as error:
        raise ConfigError(f"{origin}: {error}") from None
