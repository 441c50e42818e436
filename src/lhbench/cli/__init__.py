"""The ``lhbench`` command line (thin over ``lhbench.jobs`` and ``lhbench.reporting``)."""

from lhbench.cli.app import app, main

__all__ = ["app", "main"]
