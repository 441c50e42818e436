"""``dump_json(..., str_keys=True)``: json.dumps first, the NaN walk only when needed.

``lhbench judge --json`` prints 22 MB for 67,000 runs; walking every value for NaN before
``json.dumps`` cost a second per call. With ``str_keys`` the text must be the walk's,
byte for byte, with or without a NaN or an infinity in it.
"""

from __future__ import annotations

import math
from datetime import date
from typing import Any

import pytest

from lhbench.cli import common
from lhbench.cli.common import dump_json


def _printed(capsys: pytest.CaptureFixture[str], value: Any, **kw: Any) -> str:
    dump_json(value, **kw)
    return capsys.readouterr().out


@pytest.mark.parametrize(
    "value",
    [
        {"runs": [{"run": "r1", "judges": {"a@h": 1.25}, "mean": 2.0, "cost_usd": 0}]},
        {"mean": math.nan, "variance": math.inf, "rows": [(1, -math.inf), {"x": [math.nan]}]},
        {"when": date(2026, 11, 28), "ids": ("a", "b"), "none": None, "ok": True},
        [],
    ],
    ids=["plain", "nan-and-infinities", "default-str-and-tuples", "empty"],
)
def test_str_keys_prints_the_walks_text(capsys: pytest.CaptureFixture[str], value: Any) -> None:
    assert _printed(capsys, value, str_keys=True) == _printed(capsys, value)


def test_no_walk_without_a_nan(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    walked: list[Any] = []
    walk = common._no_nan

    def counting(value: Any) -> Any:
        walked.append(value)
        return walk(value)

    monkeypatch.setattr(common, "_no_nan", counting)
    rows = {"runs": [{"run": f"r{i}", "mean": i / 3} for i in range(1000)]}
    text = _printed(capsys, rows, str_keys=True)
    assert walked == [] and text.count('"run"') == 1000
    # a NaN: walked once (written as null), as without str_keys
    assert _printed(capsys, {"mean": math.nan}, str_keys=True) == '{"mean": null}\n'
    assert len(walked) >= 1


def test_keys_of_other_types_keep_the_walks_str_without_str_keys(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # json.dumps writes True as "true" and None as "null"; the walk wrote str(key)
    assert _printed(capsys, {True: 1, None: 2, 3: 4}) == '{"True": 1, "None": 2, "3": 4}\n'
