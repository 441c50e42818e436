"""Loading a bench script as a module in a test."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parents[2] / "bench"


@contextlib.contextmanager
def bench_module(name: str) -> Iterator[ModuleType]:
    """``bench/<name>.py`` as a module; the environment it changes is restored after.

    Every bench imports ``common``, which pins BLAS/OpenMP thread counts in ``os.environ``.
    """
    env = dict(os.environ)
    sys.path.insert(0, str(BENCH))
    try:
        yield importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCH))
        os.environ.clear()
        os.environ.update(env)
