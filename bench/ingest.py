"""Import throughput and memory: Claude Code stream-json against a bare json.loads loop.

Generates a stream-json transcript (1 GB; ``--quick``: 64 MB) of tool calls and results,
then times, each in its own process, in alternating rounds (``bench/common.py``: the side
that goes first rotates; at least three rounds; BLAS/OpenMP threads pinned to 1 on both
sides): (a) a bare ``for line in f: json.loads(line)`` loop over the file, and (b)
``lhbench import`` of the file into a fresh SQLite store (a large import inserts through
a step writer process: its CPU and peak RSS are reported with the importer's). Prints the
machine's load at the start and end, every round's figures, both throughputs (MB/s,
medians), the ratio of the median CPU seconds too (less sensitive to other load on a
shared machine), the importer's peak RSS, and, without ``--quick``, the peak RSS of
importing an Inspect ``.json`` log of at least 150 MB. The headline, last: the import's
median throughput as a fraction of the bare loop's (a ratio of medians).

    uv run python bench/ingest.py [--quick] [--reps 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import common

SESSION = "5d7c0a4e-2b9f-4e1a-8c3d-6f5e4d3c2b1a"

BASELINE = """
import json, resource, sys, time
t = time.perf_counter()
c = time.process_time()
n = 0
with open(sys.argv[1], "rb") as f:
    for line in f:
        json.loads(line)
        n += 1
print(json.dumps({"seconds": time.perf_counter() - t, "cpu": time.process_time() - c, "lines": n,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

IMPORT = """
import json, resource, sys, time
from pathlib import Path
from lhbench.config import Settings
from lhbench.api import import_transcripts
from lhbench.store import Store
import os, threading
def children_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
# the writer process's own peak RSS (VmHWM after its exec; the kernel's RUSAGE_CHILDREN
# figure also counts the parent's pages the child shared between fork and exec)
writer_hwm = [0.0]
done = threading.Event()
def watch():
    while not done.wait(0.05):
        for tid in os.listdir("/proc/self/task"):
            try:
                kids = open(f"/proc/self/task/{tid}/children").read().split()
            except OSError:
                continue
            for pid in kids:
                try:
                    for line in open(f"/proc/{pid}/status"):
                        if line.startswith("VmHWM:"):
                            writer_hwm[0] = max(writer_hwm[0], int(line.split()[1]) / 1024)
                except OSError:
                    pass
threading.Thread(target=watch, daemon=True).start()
with Store.open("sqlite:///" + sys.argv[2]) as store:  # an existing store: migrated first
    t = time.perf_counter()
    c = time.process_time() + children_cpu()
    out = import_transcripts([Path(sys.argv[1])], fmt=sys.argv[3], store=store,
                             settings=Settings(home=Path(sys.argv[2]).parent))
    # the CPU of the step writer process counts too
    seconds, cpu = time.perf_counter() - t, time.process_time() + children_cpu() - c
    done.set()
    runs = [store.get_run(r) for f in out.files for r in f.runs]
steps = sum(f.steps for f in out.files)
errors = [f.error for f in out.files if f.error]
print(json.dumps({"seconds": seconds, "cpu": cpu, "steps": steps, "runs": len(runs),
                  "statuses": sorted({r.status.value for r in runs}), "errors": errors,
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "writer_rss_mb": writer_hwm[0]}))
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
            for block in (
                {"type": "text", "text": f"Step {i}: checking the build output."},
                {
                    "type": "tool_use",
                    "id": f"toolu_{i:08d}",
                    "name": "Bash",
                    "input": {"command": f"npm run build -- --step {i}"},
                },
            ):
                message = {
                    "id": mid,
                    "model": "claude-opus-4-6",
                    "role": "assistant",
                    "content": [block],
                    "usage": usage,
                }
                line = {"type": "assistant", "message": message, "session_id": SESSION}
                f.write(json.dumps({**line, "timestamp": ts}) + "\n")
            result = {
                "tool_use_id": f"toolu_{i:08d}",
                "type": "tool_result",
                "content": f"build log {i}\n{out}",
                "is_error": i % 17 == 0,
            }
            user = {"role": "user", "content": [result]}
            line = {"type": "user", "message": user, "session_id": SESSION, "timestamp": ts}
            f.write(json.dumps(line) + "\n")
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


def generate_inspect(path: Path, target_bytes: int) -> int:
    """An Inspect EvalLog ``.json`` of about ``target_bytes``, samples with long ``events``."""
    filler = "y" * 2000
    with path.open("w") as f:
        header = {
            "version": 2,
            "status": "success",
            "eval": {
                "run_id": "bench",
                "task": "bench",
                "created": "2026-06-10T09:30:00+00:00",
                "model": "openai/gpt-5-mini",
                "packages": {"inspect_ai": "0.3.285"},
            },
        }
        f.write(json.dumps(header)[:-1] + ', "samples": [\n')
        k = 0
        while f.tell() < target_bytes:
            messages = [{"role": "user", "content": f"task {k}"}]
            for j in range(200):
                call = {"id": f"c{k}-{j}", "function": "bash", "arguments": {"cmd": f"ls {j}"}}
                messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
                messages.append({"role": "tool", "content": filler, "tool_call_id": f"c{k}-{j}"})
            events = [{"event": "model", "input": messages[:3], "output": filler}] * 200
            sample = {
                "id": f"s{k}",
                "epoch": 1,
                "messages": messages,
                "events": events,
                "model_usage": {"openai/gpt-5-mini": {"input_tokens": 100, "output_tokens": 5}},
                "total_time": 3.5,
            }
            f.write(("," if k else "") + json.dumps(sample) + "\n")
            k += 1
        f.write("]}\n")
        return f.tell()


def run(code: str, *args: str) -> dict[str, object]:
    res = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ),  # common pinned the thread pools in it
    )
    out: dict[str, object] = json.loads(res.stdout.strip().splitlines()[-1])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="64 MB instead of 1 GB")
    ap.add_argument("--reps", type=int, default=3, help="Alternating rounds (>= 3)")
    ap.add_argument("--keep", type=Path, help="Directory to work in (default: a temporary one)")
    args = ap.parse_args()
    print(common.load_line("ingest"), flush=True)
    target = (64 if args.quick else 1024) * 1024 * 1024
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        src = work / "claude-stream.jsonl"
        size = generate(src, target)
        mb = size / 1024 / 1024
        rounds = [0]

        def baseline() -> dict[str, object]:
            return run(BASELINE, str(src))

        def importer() -> dict[str, object]:
            rounds[0] += 1
            db = work / f"ingest-{rounds[0]}.db"
            out = run(IMPORT, str(src), str(db), "claude-code")
            for p in work.glob(f"ingest-{rounds[0]}.db*"):
                p.unlink()
            assert out["errors"] == [] and out["statuses"] == ["completed"], out
            return out

        res = common.alternate({"json.loads": baseline, "import": importer}, max(3, args.reps))
        base, imp = res["json.loads"], res["import"]

        def col(rows: list[dict[str, object]], key: str) -> list[float]:
            return [float(r[key]) for r in rows]  # type: ignore[arg-type]

        base_s, imp_s = col(base, "seconds"), col(imp, "seconds")
        base_cpu, imp_cpu = col(base, "cpu"), col(imp, "cpu")
        print(f"json.loads wall s {common.spread(base_s)}, cpu s {common.spread(base_cpu)}")
        print(f"import     wall s {common.spread(imp_s)}, cpu s {common.spread(imp_cpu)}")
        rss = max(col(imp, "rss_mb"))
        writer_rss = max(col(imp, "writer_rss_mb"))
        print(f"file: {mb:.0f} MB, {base[0]['lines']:,} lines; imported {imp[0]['steps']:,} steps")
        print(
            f"bare json.loads loop: median {mb / common.median(base_s):.1f} MB/s "
            f"(peak RSS {max(col(base, 'rss_mb')):.0f} MB)"
        )
        print(
            f"lhbench import (SQLite store): median {mb / common.median(imp_s):.1f} MB/s "
            f"(peak RSS {rss:.0f} MB, target < 300 MB; its step writer process "
            f"{writer_rss:.0f} MB more, sampled every 50 ms)"
        )
        cpu_ratio = common.ratio_of_medians(base_cpu, imp_cpu)
        print(
            "the same in CPU seconds, the writer process's included "
            f"(less sensitive to other load): {cpu_ratio:.2f}"
        )
        src.unlink()
        if not args.quick:
            log = work / "inspect-log.json"
            isize = generate_inspect(log, 160 * 1024 * 1024)
            ins = run(IMPORT, str(log), str(work / "inspect.db"), "inspect")
            assert ins["errors"] == [], ins
            print(
                f"Inspect .json log: {isize / 1024 / 1024:.0f} MB, {ins['runs']} samples, "
                f"{ins['steps']:,} steps in {ins['seconds']:.1f} s; "
                f"peak RSS {ins['rss_mb']:.0f} MB (target < 300 MB)"
            )
    print(common.load_line("ingest", "end"))
    ratio = common.ratio_of_medians(base_s, imp_s)  # time ratio = throughput ratio
    print(f"ingest throughput fraction: {ratio:.2f} (target >= 0.5; peak RSS {rss:.0f} MB)")


if __name__ == "__main__":
    main()
