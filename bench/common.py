"""What every bench script shares, so its figures mean the same on a busy 2-core machine.

- BLAS/OpenMP threads are pinned to 1 for this process and every process it starts, on
  both sides of a comparison (import this module before numpy).
- The machine's load is printed at the start (and can be printed again at the end).
- Both sides run in alternation, at least 3 times each, and figures are medians; a ratio
  is the ratio of the medians.
- The last line is the headline: ``NAME: VALUE (target …)``.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

THREAD_VARS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
)
for _var in THREAD_VARS:
    os.environ[_var] = "1"

T = TypeVar("T")


def pin_threads() -> str:
    """Pin BLAS/OpenMP pools already loaded to one thread (the env covers later ones)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return "env"
    threadpool_limits(1)
    return "env+threadpoolctl"


def speed_check() -> float:
    """CPU seconds this process takes for a fixed piece of Python work (allocating too).

    The load average misses a shared host's other tenants: on this 2-core machine a
    20,000,000-step loop took 0.63 s of CPU and 1.17 s a few seconds later, the load
    under 1 throughout (2026-11-28). A figure measured in a slow spell is the host's.
    """
    start = time.process_time()
    kept = []
    for i in range(300_000):
        kept.append({"i": i})
    total = 0
    for i in range(1_000_000):
        total += i
    del kept
    return time.process_time() - start


def load_line(name: str, when: str = "start") -> str:
    """The machine's load averages, core count and speed, as printed at a bench's start."""
    one, five, fifteen = os.getloadavg()
    return (
        f"{name}: machine load at {when} {one:.2f} / {five:.2f} / {fifteen:.2f} "
        f"(1/5/15 min) on {os.cpu_count()} cores; speed check {1000 * speed_check():.0f} ms "
        f"of CPU (lower is faster); BLAS/OpenMP threads pinned to 1 ({pin_threads()})"
    )


def alternate(
    sides: dict[str, Callable[[], T]],
    reps: int,
    between: Callable[[], object] | None = None,
) -> dict[str, list[T]]:
    """Run every side once per round, ``reps`` rounds, rotating who goes first each round.

    ``between`` runs before every side (``settle``: the work a side left behind, such as a
    database server's checkpoint, is not charged to the next side).
    """
    if reps < 3:
        raise ValueError("at least 3 alternating repetitions")
    names = list(sides)
    out: dict[str, list[T]] = {n: [] for n in names}
    for r in range(reps):
        order = names[r % len(names) :] + names[: r % len(names)]
        for n in order:
            if between is not None:
                between()
            out[n].append(sides[n]())
    return out


def _busy_ticks() -> tuple[int, int]:
    # (busy, total) clock ticks of every core since boot, from /proc/stat's first line
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    total = sum(fields[:8])  # guest time is counted in user already
    return total - idle, total


SETTLE_LIMIT = 15.0  # seconds ``settle`` waits at most


def settle(
    quiet: float = 0.1,
    window: float = 0.25,
    limit: float = SETTLE_LIMIT,
    ticks: Callable[[], tuple[int, int]] | None = None,
) -> float:
    """Wait until the machine is quiet; the seconds waited.

    Quiet: dirty pages written out (``sync``), then the machine's cores busy at most
    ``quiet`` of a ``window`` (what this process does while it waits is counted too, and
    is close to nothing). Gives up after ``limit`` seconds, so a machine that never goes
    quiet still gets its figures, with the wait printed beside them (a wait of ``limit``
    or more: it gave up, the machine was not seen quiet). Without /proc/stat
    (not Linux) only the sync. ``ticks``: (busy, total) clock ticks so far (default: read
    from /proc/stat).
    """
    ticks = ticks or _busy_ticks
    start = time.perf_counter()
    os.sync()
    try:
        busy, total = ticks()
    except OSError:
        return time.perf_counter() - start
    while time.perf_counter() - start < limit:
        time.sleep(window)
        b, t = ticks()
        if t > total and (b - busy) / (t - total) <= quiet:
            break
        busy, total = b, t
    return time.perf_counter() - start


def median(values: Sequence[float]) -> float:
    """The median."""
    return float(statistics.median(values))


def ratio_of_medians(numerator: Sequence[float], denominator: Sequence[float]) -> float:
    """median(numerator) / median(denominator)."""
    return median(numerator) / median(denominator)


def spread(values: Sequence[float], fmt: str = "{:.3f}") -> str:
    """Every repetition's value, for the record."""
    return "[" + ", ".join(fmt.format(v) for v in values) + "]"


class Timer:
    """Wall and process CPU time of a block (CPU of every thread of this process)."""

    def __enter__(self) -> Timer:
        self.wall0, self.cpu0 = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall0
        self.cpu = time.process_time() - self.cpu0
