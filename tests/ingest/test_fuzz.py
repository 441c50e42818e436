"""Every importer fed hundreds of mutated files: no traceback, no run left running, bounded memory.

Mutations are drawn (seeded) from what breaks real imports: files cut off anywhere, values
of the wrong type, integers past 64 bits, timestamps out of range or not timestamps,
nesting deeper than the JSON encoder allows, NUL characters and over-long ids (which
PostgreSQL refuses), binary garbage, and for ``.eval`` archives corrupted bytes and zip
bombs that tell the truth or lie about their size.
"""

from __future__ import annotations

import json
import random
import tracemalloc
import zlib
from pathlib import Path
from typing import Any

import pytest
import zstandard

from lhbench.store import Store
from tests.ingest.helpers import ZSTD, import_paths, write_zip

FIX = Path(__file__).parent / "fixtures"
SEEDS = {
    "claude-code": [
        "claude_code_stream.jsonl",
        "claude_code_session.jsonl",
        "claude_code_resumed.jsonl",
        "claude_code_subagent.jsonl",
        "claude_code_session_out_of_order.jsonl",
        "claude_code_harness_text.jsonl",
    ],
    "codex": ["codex_exec.jsonl", "codex_rollout.jsonl", "codex_rollout_harness.jsonl"],
    "gemini-cli": ["gemini_stream.jsonl", "gemini_output.json"],
    "osworld": ["osworld_traj.jsonl", "osworld_crash_after_steps.jsonl"],
    "jsonl": ["generic.jsonl"],
    "inspect": ["inspect_log.json"],
}
# what a fuzzed file may legitimately be refused for (anything else is a bug)
KNOWN = (
    "no step could be read",
    "no transcript found",
    "not valid JSON",
    "expected a JSON object",
    "truncated last line",
    "unexpected event shape",
    "line longer than",
)

_HUGE: list[Any] = [2**80, -(2**70), 18446744073709551615, 1e308, -1e308, 2**63]
_TIMES: list[Any] = [
    "not a date",
    "99999-01-01T00:00:00Z",
    "2026-13-45T99:99:99Z",
    "0001-01-01T00:00:00+14:00",
    "9999-12-31T23:59:59-14:00",
    -1e20,
    1e30,
    0,
]


def _deep(n: int) -> str:
    # a placeholder, replaced by the nested text when dumped (the encoder would recurse)
    return f"@@deep{n}@@"


def _deep_text(n: int) -> str:
    return '{"k":[' * (n // 2) + '"bottom"' + "]}" * (n // 2)


def _scalar(rng: random.Random) -> Any:
    return rng.choice(
        [
            None,
            True,
            -1,
            "x" * rng.choice([1, 300]),
            "nul\x00byte",
            rng.choice(_HUGE),
            rng.choice(_TIMES),
            [],
            {},
            [1, "a", None],
            {"type": "text", "text": 5},
        ]
    )


def _paths(obj: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _paths(v, (*prefix, i))
    return out


def _mutate_value(rng: random.Random, obj: Any) -> Any:
    paths = [p for p in _paths(obj) if p]
    if not paths:
        return _scalar(rng)
    path = rng.choice(paths)
    parent = obj
    for k in path[:-1]:
        parent = parent[k]
    how = rng.choice(["swap", "huge", "time", "deep", "delete", "long", "nul"])
    key = path[-1]
    if how == "delete" and isinstance(parent, dict):
        del parent[key]
    elif how == "huge":
        parent[key] = rng.choice(_HUGE)
    elif how == "time":
        parent[key] = rng.choice(_TIMES)
    elif how == "deep":
        parent[key] = _deep(rng.choice([300, 1100]))
    elif how == "long":
        parent[key] = "é" * 5000 if rng.random() < 0.5 else "id" * 400
    elif how == "nul":
        parent[key] = "a\x00b"
    else:
        parent[key] = _scalar(rng)
    return obj


def _dumps(obj: Any, indent: int | None = None) -> bytes:
    # json (not orjson): it writes integers of any size
    text = json.dumps(obj, indent=indent)
    for n in (300, 1100):
        text = text.replace(f'"@@deep{n}@@"', _deep_text(n))
    return text.encode()


def mutate_lines(rng: random.Random, data: bytes) -> bytes:
    lines = data.splitlines()
    how = rng.choice(["value", "value", "value", "truncate", "garbage", "line_type", "shuffle"])
    if how == "truncate":
        return data[: rng.randrange(1, len(data))]
    if how == "garbage":
        i = rng.randrange(len(lines))
        lines[i] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 400)))
        if rng.random() < 0.2:
            return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 5000)))
    elif how == "line_type":
        lines[rng.randrange(len(lines))] = _dumps(_scalar(rng))
    elif how == "shuffle":
        rng.shuffle(lines)
    else:
        for _ in range(rng.choice([1, 1, 2, 4])):
            i = rng.randrange(len(lines))
            try:
                obj = json.loads(lines[i])
            except (ValueError, RecursionError):
                continue
            lines[i] = _dumps(_mutate_value(rng, obj))
    return b"\n".join(lines) + b"\n"


def mutate_document(rng: random.Random, data: bytes) -> bytes:
    how = rng.choice(["value", "value", "value", "truncate", "garbage"])
    if how == "truncate":
        return data[: rng.randrange(1, len(data))]
    if how == "garbage":
        cut = rng.randrange(len(data))
        return data[:cut] + bytes(rng.randrange(256) for _ in range(200)) + data[cut:]
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError):
        return data[: len(data) // 2]
    for _ in range(rng.choice([1, 2, 4])):
        obj = _mutate_value(rng, obj)
    return _dumps(obj, indent=1)


def _eval_members(rng: random.Random) -> dict[str, bytes]:
    doc = json.loads((FIX / "inspect_log.json").read_text())
    members = {"header.json": json.dumps({k: v for k, v in doc.items() if k != "samples"}).encode()}
    for s in doc["samples"]:
        members[f"samples/{s['id']}_epoch_{s['epoch']}.json"] = json.dumps(s).encode()
    name = rng.choice(list(members))
    members[name] = mutate_document(rng, members[name])
    return members


_ZEROS = zstandard.ZstdCompressor().compress(b"\0" * (16 << 20))


def mutated_eval(rng: random.Random, path: Path) -> None:
    members = _eval_members(rng)
    how = rng.choice(["member", "member", "bytes", "truncate", "bomb", "lying_bomb"])
    bomb = "samples/bomb_epoch_1.json"
    if how == "bomb":
        members[bomb] = b""
        write_zip(path, members, packed={bomb: _ZEROS * 64}, declared={bomb: 64 * (16 << 20)})
        return
    if how == "lying_bomb":
        members[bomb] = b""
        write_zip(path, members, packed={bomb: _ZEROS * 64}, declared={bomb: 4096})
        return
    write_zip(path, members, method=rng.choice([ZSTD, ZSTD, 8, 0]))
    data = bytearray(path.read_bytes())
    if how == "bytes":
        for _ in range(rng.randrange(1, 20)):
            data[rng.randrange(len(data))] = rng.randrange(256)
    elif how == "truncate":
        data = data[: rng.randrange(1, len(data))]
    path.write_bytes(bytes(data))


def make_corpus(root: Path, fmt: str, n: int, seed: int) -> Path:
    """``n`` distinct mutated files of one format."""
    rng = random.Random(seed)
    d = root / fmt
    d.mkdir(parents=True)
    seen: set[bytes] = set()
    k = 0
    while k < n:
        if fmt == "inspect" and k % 2:
            path = d / f"m{k:03d}.eval"
            mutated_eval(rng, path)
            out = path.read_bytes()
        else:
            seed_name = rng.choice(SEEDS[fmt])
            data = (FIX / seed_name).read_bytes()
            doc = seed_name.endswith(".json")
            out = mutate_document(rng, data) if doc else mutate_lines(rng, data)
            path = d / f"m{k:03d}{Path(seed_name).suffix}"
            path.write_bytes(out)
        if out in seen:
            path.unlink()
            continue
        seen.add(out)
        k += 1
    return d


@pytest.mark.parametrize("fmt", sorted(SEEDS))
def test_mutated_files_never_crash_nor_leave_runs_running(
    fmt: str, store: Store, tmp_path: Path
) -> None:
    n = 200 if store.backend == "sqlite" else 40
    # a fixed seed per format (str hashes change per process): a failure reproduces
    corpus = make_corpus(tmp_path / "corpus", fmt, n, seed=zlib.crc32(fmt.encode()))
    tracemalloc.start()
    try:
        res = import_paths(store, [corpus], fmt=fmt)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    summary = res.outcome.summary
    assert summary.planned == n and summary.done + summary.failed == n
    assert not [k for k in summary.failures if k.startswith("crashed")], summary.failures
    for f in res.outcome.files:
        if f.error:
            assert any(k in f.error for k in KNOWN), f.error
            assert "Traceback" not in f.error and "import stopped" not in f.error, f.error
    runs = store.list_runs()
    assert runs, "no mutated file was importable at all: the corpus is too broken to test"
    assert [r.id for r in runs if r.status.value in ("running", "pending")] == []
    assert all(r.metadata.get("import") == "done" for r in runs)
    assert peak < 96 << 20, f"peak traced memory {peak >> 20} MiB"
    for r in runs[:20]:  # what was stored reads back as valid Steps
        store.get_trajectory(r.id)
