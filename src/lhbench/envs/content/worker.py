"""Run a content check's worker process (slides in Chromium, scenes with ffprobe).

Inside the sandbox when one is given; the worker writes its findings as one JSON file.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lhbench.sandbox import Sandbox, SandboxPolicy, run_sandboxed_sync


def run_worker(
    argv: Sequence[str],
    *,
    sandbox: Sandbox | None,
    policy: SandboxPolicy | None,
    timeout: float,
    result: Path,
    what: str,
) -> Any:
    """Run ``argv`` (sandboxed under ``policy`` when ``sandbox`` is given) and read ``result``.

    Raises:
        RuntimeError: the worker timed out, failed, or wrote no result; ``what`` names it.
    """
    if sandbox is not None and policy is not None:
        fin = run_sandboxed_sync(sandbox, argv, policy)
        timed_out, code = fin.timed_out, fin.returncode
        stderr = fin.text("stderr") or fin.text()
    else:
        try:
            done = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout)
            timed_out, code, stderr = False, done.returncode, done.stderr or done.stdout
        except subprocess.TimeoutExpired:
            timed_out, code, stderr = True, None, ""
    if timed_out:
        raise RuntimeError(f"the {what} timed out after {timeout:g}s")
    if code != 0 or not result.is_file():
        tail = stderr.strip().splitlines()[-5:]
        raise RuntimeError(f"the {what} exited {code}: {' | '.join(tail)[-800:]}")
    return json.loads(result.read_text(encoding="utf-8"))
