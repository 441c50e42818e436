"""A check's verdict is read from its answer, one way for verify scripts and hook checks.

A script that prints ``{"ok": false}`` and exits 0 contradicts itself: no label, never a
pass (issue 25 item 1).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from lhbench.envs.verify import VerifyError, run_verify
from lhbench.harness.hooks import run_hooks
from lhbench.sandbox import CRASH_EXIT, CheckAnswerError, get_sandbox, read_check_answer
from lhbench.schema.pack import HookSpec


def _script(tmp_path: Path, body: str, name: str = "verify.py") -> Path:
    path = tmp_path / "task" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body))
    return path


def _state(tmp_path: Path) -> Path:
    root = tmp_path / "state"
    root.mkdir(exist_ok=True)
    return root


def _answering(payload: str, code: int) -> str:
    return f"import sys\nprint({payload!r})\nsys.exit({code})\n"


def test_a_verify_script_saying_not_ok_but_exiting_0_is_no_label(tmp_path: Path) -> None:
    script = _script(tmp_path, _answering('{"ok": false, "diagnosis": "report.md is wrong"}', 0))
    with pytest.raises(VerifyError, match="contradicts itself") as info:
        run_verify(script, root=_state(tmp_path))
    assert info.value.fault == "disagree"
    assert isinstance(info.value.__cause__, CheckAnswerError)


@pytest.mark.parametrize(
    ("payload", "code", "passed", "detail"),
    [
        ('{"ok": true, "detail": "fine"}', 0, True, "fine"),
        ('{"ok": false, "diagnosis": "wrong"}', 1, False, "wrong"),
        ('{"detail": "no ok given"}', 1, False, "no ok given"),
        ("plain text", 0, True, "plain text"),
    ],
    ids=["ok-exit-0", "not-ok-exit-1", "exit-code-only", "not-json"],
)
def test_a_verify_script_whose_answer_agrees_is_labelled(
    tmp_path: Path, payload: str, code: int, passed: bool, detail: str
) -> None:
    res = run_verify(_script(tmp_path, _answering(payload, code)), root=_state(tmp_path))
    assert (res.passed, res.detail) == (passed, detail)


def test_a_hook_check_saying_ok_but_exiting_1_is_no_verdict(tmp_path: Path) -> None:
    _script(tmp_path, _answering('{"ok": true, "diagnosis": "fine"}', 1), "check.py")
    spec = HookSpec(after_tool="write_file", check="check.py", timeout_s=30)
    [res] = run_hooks([spec], "write_file", tmp_path / "task", _state(tmp_path), sandbox=None)
    assert not res.ok
    assert res.error is not None and "contradicts itself" in res.error
    assert "fine" in res.diagnosis  # what it said is still shown to the agent


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ('{"ok": false, "diagnosis": "d"}', 0),
        ('{"ok": true, "diagnosis": "d"}', 1),
        ('{"ok": true, "diagnosis": "d"}', 0),
        ('{"ok": false, "diagnosis": "d"}', 1),
        ('{"ok": "yes"}', 0),
    ],
)
def test_verify_and_hook_checks_read_the_same_answer_the_same_way(
    tmp_path: Path, payload: str, code: int
) -> None:
    script = _script(tmp_path, _answering(payload, code), "check.py")
    spec = HookSpec(after_tool="*", check="check.py", timeout_s=30)
    sandbox = get_sandbox()
    [hook] = run_hooks([spec], "x", script.parent, _state(tmp_path), sandbox=sandbox)
    try:
        verify: bool | None = run_verify(script, root=_state(tmp_path), sandbox=sandbox).passed
    except VerifyError:
        verify = None
    assert (None if hook.error else hook.ok) == verify


@pytest.mark.parametrize(
    ("kw", "fault"),
    [
        ({"returncode": 0, "stdout": '{"ok": false}'}, "disagree"),
        ({"returncode": 1, "stdout": '{"ok": true}'}, "disagree"),
        ({"returncode": 0, "stdout": '{"ok": 1}'}, "shape"),
        ({"returncode": CRASH_EXIT, "stdout": "", "stderr": "Traceback\nKeyError"}, "crash"),
        ({"returncode": 3, "stdout": ""}, "exit"),
        ({"returncode": None, "stdout": "", "timed_out": True, "timeout": 5.0}, "timeout"),
        ({"returncode": 0, "stdout": "[1]", "payload": "required"}, "shape"),
        ({"returncode": 0, "stdout": "text", "payload": "required"}, "shape"),
    ],
)
def test_answers_without_a_verdict_are_typed_errors(kw: dict[str, object], fault: str) -> None:
    with pytest.raises(CheckAnswerError) as info:
        read_check_answer("tasks/t/verify.py", **kw)  # type: ignore[arg-type]
    assert info.value.fault == fault and str(info.value).startswith("tasks/t/verify.py: ")


def test_a_state_checks_passed_is_read_as_its_verdict() -> None:
    ans = read_check_answer("c", returncode=1, stdout='{"passed": false, "detail": "d"}')
    assert (ans.passed, ans.detail) == (False, "d")
    with pytest.raises(CheckAnswerError) as info:
        read_check_answer("c", returncode=0, stdout='{"passed": false, "detail": "d"}')
    assert info.value.fault == "disagree"
