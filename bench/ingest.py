"""Import throughput and memory on a large Claude Code stream-json transcript.

Generates a stream-json file (1 GB; ``--quick``: 64 MB) of tool calls and results, then
times, each in its own process: (a) ``lhbench import`` of the file into a SQLite store,
and (b) a bare ``for line in f: json.loads(line)`` loop over the same file (the baseline).
Prints both throughputs (MB/s), the importer's peak RSS, and last the headline: import
throughput as a fraction of the bare loop's.

    uv run python bench/ingest.py [--quick] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

SESSION = "5d7c0a4e-2b9f-4e1a-8c3d-6f5e4d3c2b1a"

BASELINE = """
import json, resource, sys, time
t = time.perf_counter()
n = 0
with open(sys.argv[1], "rb") as f:
    for line in f:
        json.loads(line)
        n += 1
print(json.dumps({"seconds": time.perf_counter() - t, "lines": n,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

IMPORT = """
import json, resource, sys, time
from pathlib import Path
import asyncio
from lhbench.config import Settings
from lhbench.jobs import import_transcripts
from lhbench.store import Store
t = time.perf_counter()
with Store.open("sqlite:///" + sys.argv[2]) as store:
    out = asyncio.run(import_transcripts(store, Settings(home=Path(sys.argv[2]).parent),
                                         [Path(sys.argv[1])], fmt="claude-code"))
steps = sum(f.steps for f in out.files)
runs = sum(len(f.runs) for f in out.files)
print(json.dumps({"seconds": time.perf_counter() - t, "steps": steps, "runs": runs,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def generate(path: Path, target_bytes: int) -> int:
    """Write a realistic stream-json transcript of about ``target_bytes``; returns its size."""
    out = "x" * 1500
    with path.open("w") as f:
        f.write(
            json.dumps(
                {
                    "type": "system",
                    "subtype": "init",
                    "session_id": SESSION,
                    "model": "claude-opus-4-6",
                    "tools": ["Bash", "Read", "Edit"],
                    "claude_code_version": "2.1.276",
                    "cwd": "/w",
                }
            )
            + "\n"
        )
        i = 0
        while f.tell() < target_bytes:
            mid = f"msg_{i:08d}"
            usage = {
                "input_tokens": 1000 + i % 500,
                "output_tokens": 50,
                "cache_read_input_tokens": 900,
            }
            ts = f"2026-03-02T10:{(i // 60) % 60:02d}:{i % 60:02d}.000Z"
            f.write(
                json.dumps(
                    {
                        "type": "assistant",
                        "message": {
                            "id": mid,
                            "model": "claude-opus-4-6",
                            "role": "assistant",
                            "content": [
                                {"type": "text", "text": f"Step {i}: checking the build output."}
                            ],
                            "usage": usage,
                        },
                        "session_id": SESSION,
                        "timestamp": ts,
                    }
                )
                + "\n"
            )
            f.write(
                json.dumps(
                    {
                        "type": "assistant",
                        "message": {
                            "id": mid,
                            "model": "claude-opus-4-6",
                            "role": "assistant",
                            "content": [
                                {
                                    "type": "tool_use",
                                    "id": f"toolu_{i:08d}",
                                    "name": "Bash",
                                    "input": {"command": f"npm run build -- --step {i}"},
                                }
                            ],
                            "usage": usage,
                        },
                        "session_id": SESSION,
                        "timestamp": ts,
                    }
                )
                + "\n"
            )
            f.write(
                json.dumps(
                    {
                        "type": "user",
                        "message": {
                            "role": "user",
                            "content": [
                                {
                                    "tool_use_id": f"toolu_{i:08d}",
                                    "type": "tool_result",
                                    "content": f"build log {i}\n{out}",
                                    "is_error": i % 17 == 0,
                                }
                            ],
                        },
                        "session_id": SESSION,
                        "timestamp": ts,
                    }
                )
                + "\n"
            )
            i += 1
        f.write(
            json.dumps(
                {
                    "type": "result",
                    "subtype": "success",
                    "is_error": False,
                    "num_turns": i,
                    "duration_ms": 1,
                    "duration_api_ms": 1,
                    "session_id": SESSION,
                    "total_cost_usd": 12.5,
                }
            )
            + "\n"
        )
        return f.tell()


def run(code: str, *args: str) -> dict[str, float]:
    res = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, check=True
    )
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="64 MB instead of 1 GB")
    ap.add_argument("--keep", type=Path, help="Directory to work in (default: a temporary one)")
    args = ap.parse_args()
    target = (64 if args.quick else 1024) * 1024 * 1024
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        src = work / "claude-stream.jsonl"
        size = generate(src, target)
        mb = size / 1024 / 1024
        base = run(BASELINE, str(src))
        imp = run(IMPORT, str(src), str(work / "ingest.db"))
    base_tp = mb / base["seconds"]
    imp_tp = mb / imp["seconds"]
    print(f"file: {mb:.0f} MB, {int(base['lines']):,} lines; imported {int(imp['steps']):,} steps")
    print(
        f"bare json.loads loop: {base['seconds']:.1f} s = {base_tp:.1f} MB/s "
        f"(peak RSS {base['rss_mb']:.0f} MB)"
    )
    print(
        f"lhbench import (SQLite store): {imp['seconds']:.1f} s = {imp_tp:.1f} MB/s "
        f"(peak RSS {imp['rss_mb']:.0f} MB, target < 300 MB)"
    )
    print(
        f"ingest throughput fraction: {imp_tp / base_tp:.2f} "
        f"(target >= 0.5; peak RSS {imp['rss_mb']:.0f} MB)"
    )


if __name__ == "__main__":
    main()
