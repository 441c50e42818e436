"""What the sandbox costs to start: ``python -I -c pass`` sandboxed vs. bare.

Both sides run the same interpreter with the same arguments, in alternation; the
sandboxed side goes through everything lhbench does for one command (the host-side
launcher, as root the idmapped staging and the uid drop, prlimit, bwrap with its
namespaces, /proc covers and seccomp filter, cgroups where writable, the disk watch).
Figures are wall-clock medians; the ratio is sandboxed over bare. Issue 28 item 1 is the
later step that makes this cheaper: this only measures.

    uv run python bench/sandbox_start.py            # 20 repetitions
    uv run python bench/sandbox_start.py --quick    # 5
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import common

from lhbench.sandbox import Limits, get_sandbox, policy_for, run_sandboxed_sync


def main() -> None:
    """Time both sides and print the ratio."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="5 repetitions instead of 20")
    args = ap.parse_args()
    reps = 5 if args.quick else 20
    print(common.load_line("sandbox_start"))
    sandbox = get_sandbox()
    argv = [sys.executable, "-I", "-c", "pass"]
    with tempfile.TemporaryDirectory(prefix="lhbench-bench-") as tmp:
        work = Path(tmp)
        policy = policy_for(work, writable=[work], limits=Limits(wall_s=60, disk_mb=64))

        def bare() -> float:
            t = time.perf_counter()
            subprocess.run(argv, check=True, cwd=work)
            return time.perf_counter() - t

        def sandboxed() -> float:
            t = time.perf_counter()
            done = run_sandboxed_sync(sandbox, argv, policy)
            if done.returncode != 0:
                raise SystemExit(f"sandboxed run failed: {done.text('stderr')[-500:]}")
            return time.perf_counter() - t

        times = common.alternate({"bare": bare, "sandboxed": sandboxed}, reps)
    for side, values in times.items():
        print(f"{side}: median {common.median(values) * 1000:.1f} ms {common.spread(values)}")
    print(common.load_line("sandbox_start", "end"))
    ratio = common.ratio_of_medians(times["sandboxed"], times["bare"])
    print(f"sandbox_start: sandboxed/bare {ratio:.1f}x ({sandbox.name}; no target yet)")


if __name__ == "__main__":
    main()
