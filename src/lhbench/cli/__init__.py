"""The ``lhbench`` command line: parses flags, calls ``lhbench.api`` (or ``lhbench.reporting``)."""

from lhbench.cli.app import app, main

__all__ = ["app", "main"]
