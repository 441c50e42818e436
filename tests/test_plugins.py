"""The plugin registry and the plugin-format adapter, in process (no package installed)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lhbench.errors import TranscriptError
from lhbench.ingest.base import ImportContext, TranscriptInfo
from lhbench.ingest.formats import FORMATS, format_of_reader, read_transcripts
from lhbench.plugins import Registry, adapter
from lhbench.schema import Role, Step, StepKind


class Reader:
    name = "t-log"
    harness = "t"

    def __init__(self, steps: list[Any], fail: Exception | None = None) -> None:
        self.steps, self.fail = steps, fail

    def sniff(self, head: list[dict[str, Any]]) -> bool:
        raise RuntimeError("sniffer bug")

    def read(self, path: Path) -> Iterator[tuple[TranscriptInfo, list[Any]]]:
        if self.fail is not None:
            raise self.fail
        yield TranscriptInfo(source="ignored"), self.steps


def _msg(text: str, index: int = 7) -> Step:
    return Step(index=index, role=Role.USER, kind=StepKind.MESSAGE, content=text)


def test_plugin_steps_are_renumbered_and_the_source_is_the_file(tmp_path: Path) -> None:
    f = tmp_path / "a.log"
    f.write_text("{}\n")
    fmt = format_of_reader(Reader([_msg("a", 9), _msg("b", 3)]))
    [(info, read)] = list(read_transcripts(fmt, ImportContext(f)))
    steps = list(read)
    assert [s.index for s in steps] == [0, 1]
    assert [s.content for s in steps] == ["a", "b"]
    assert info.source == str(f)
    assert fmt.sniff([{"x": 1}]) is False  # a crashing sniffer recognises nothing


@pytest.mark.parametrize(
    ("reader", "says"),
    [
        (Reader([], fail=ValueError("bad line 3")), "t-log (plugin): ValueError: bad line 3"),
        (Reader(["not a step"]), "step 0 is a str, not a Step"),
    ],
)
def test_a_plugin_failure_is_a_transcript_error_naming_the_file(
    tmp_path: Path, reader: Reader, says: str
) -> None:
    f = tmp_path / "b.log"
    f.write_text("{}\n")
    with pytest.raises(TranscriptError) as info:
        list(read_transcripts(format_of_reader(reader), ImportContext(f)))
    assert str(f) in str(info.value) and says in str(info.value)


def test_registry_keeps_builtins_first_and_refuses_wrong_kinds() -> None:
    reg: Registry[str] = Registry(
        "lhbench.no-such-group", lambda: ["a", "b"], adapt=adapter(str, "a str"), name_of=str
    )
    assert list(reg) == ["a", "b"]
    assert all(i.builtin and i.error is None for i in reg.infos())
    with pytest.raises(TypeError, match="expected a str, got int"):
        adapter(str, "a str")([1])


def test_builtin_formats_are_registered_by_entry_point() -> None:
    infos = {i.name: i for i in FORMATS.infos()}
    assert set(infos) >= {"claude-code", "codex", "gemini-cli", "osworld", "inspect", "jsonl"}
    assert infos["codex"].target == "lhbench.ingest.formats:BUILTIN_FORMATS"
