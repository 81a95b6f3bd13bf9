"""Errors that several layers of the library raise and the command line reports."""


class ConfigError(ValueError):
    """A configuration file or override that cannot be used."""


class RunDirectoryError(ValueError):
    """A run directory that a command cannot use as asked (it holds another configuration)."""


class CorruptRunFileError(RunDirectoryError):
    """A file of a run directory that is there but cannot be read (truncated, damaged)."""
