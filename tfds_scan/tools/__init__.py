"""Maintenance scripts for ``tfds_scan`` (not used at run time)."""
