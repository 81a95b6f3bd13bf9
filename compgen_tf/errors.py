"""Errors that several layers of the library raise and the command line reports."""


class ConfigError(ValueError):
    """A configuration file or override that cannot be used."""
