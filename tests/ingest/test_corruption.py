import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lhbench.errors import TranscriptError
from lhbench.ingest import FORMATS, ImportContext, read_transcripts

FIX = Path(__file__).parent / "fixtures"
LINE_FORMATS = {
    "claude_code_stream.jsonl": "claude-code",
    "claude_code_session.jsonl": "claude-code",
    "codex_exec.jsonl": "codex",
    "codex_rollout.jsonl": "codex",
    "gemini_stream.jsonl": "gemini-cli",
    "osworld_traj.jsonl": "osworld",
    "generic.jsonl": "jsonl",
}
FILES = {name: (FIX / name).read_text().splitlines() for name in LINE_FORMATS}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-5, 5)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)


def _paths(obj, prefix=()):
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, (*prefix, i))


@st.composite
def corrupted(draw):
    name = draw(st.sampled_from(sorted(FILES)))
    lines = list(FILES[name])
    i = draw(st.integers(0, len(lines) - 1))
    how = draw(
        st.sampled_from(["replace_value", "delete_key", "truncate", "garbage", "wrong_type"])
    )
    obj = json.loads(lines[i])
    if how == "truncate":
        cut = draw(st.integers(1, max(1, len(lines[i]) - 1)))
        lines[i] = lines[i][:cut]
    elif how == "garbage":
        lines[i] = draw(
            st.text(min_size=1, max_size=30).filter(lambda t: "\n" not in t and "\r" not in t)
        )
    elif how == "wrong_type":
        lines[i] = json.dumps(draw(json_values.filter(lambda v: not isinstance(v, dict))))
    else:
        paths = [p for p in _paths(obj) if p]
        if paths:
            path = draw(st.sampled_from(paths))
            parent = obj
            for k in path[:-1]:
                parent = parent[k]
            if how == "delete_key" and isinstance(parent, dict):
                del parent[path[-1]]
            else:
                parent[path[-1]] = draw(json_values)
        lines[i] = json.dumps(obj)
    return name, lines, i + 1


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(corrupted())
def test_random_corruption_is_a_transcript_error_with_a_line_number(case) -> None:
    name, lines, bad_line = case
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / name
        p.write_text("\n".join(lines) + "\n")
        ctx = ImportContext(path=p, strict=False)
        try:
            for _info, steps in read_transcripts(FORMATS[LINE_FORMATS[name]], ctx):
                list(steps)
        except TranscriptError as exc:  # pragma: no cover - not strict, so not raised
            raise AssertionError(f"non-strict import raised {exc}") from exc
        for err in ctx.skipped:
            assert isinstance(err, TranscriptError)
            assert 1 <= err.problem.line <= len(lines)
            assert str(err).startswith(f"{p}:{err.problem.line}:")
        # strict: either it reads (the corruption was harmless) or it stops with a line number
        ctx = ImportContext(path=p, strict=True)
        try:
            for _info, steps in read_transcripts(FORMATS[LINE_FORMATS[name]], ctx):
                list(steps)
        except TranscriptError as exc:
            assert exc.problem.line == bad_line
