"""How a pack's check answers, read one way for every reader (verify, hook checks, replays).

A check (a task's ``verify.py``, a hook check, a registered state check) answers with its
exit code — 0 done, 1 not done — and may print one JSON object as its last line:
``{"ok": bool, "detail" | "diagnosis": str, "next_action": str}`` (a registered state
check says ``"passed"`` for ``"ok"``). When the object has ``ok``, that is the verdict,
and the exit code must say the same: a script that prints
``{"ok": false}`` and exits 0 has contradicted itself, and a contradiction is an error,
never a pass. A crash, a timeout, any other exit code, or an answer of the wrong shape is
an error too (:class:`CheckAnswerError`): there is no verdict, and no label is made of it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from lhbench.errors import LhbenchError
from lhbench.sandbox.policy import CRASH_EXIT

if TYPE_CHECKING:
    from lhbench.sandbox.base import Finished

__all__ = [
    "AnswerFault",
    "CheckAnswer",
    "CheckAnswerError",
    "finished_answer",
    "read_check_answer",
]

AnswerFault = Literal["timeout", "crash", "exit", "shape", "disagree"]


class CheckAnswerError(LhbenchError):
    """A check gave no verdict: it crashed, timed out, exited oddly, or contradicted itself.

    Attributes:
        what: The check (its script's path or name).
        fault: ``timeout``, ``crash``, ``exit`` (neither 0 nor 1), ``shape`` (an answer
            that is not the protocol's) or ``disagree`` (exit code and ``ok`` differ).
        detail: What the check said about the state, when it said something.
    """

    def __init__(self, what: str, fault: AnswerFault, message: str, detail: str = "") -> None:
        self.what = what
        self.fault = fault
        self.detail = detail
        super().__init__(f"{what}: {message}")


@dataclass(frozen=True)
class CheckAnswer:
    """A check's verdict and what it said."""

    passed: bool
    detail: str
    next_action: str = ""


def _tail(text: str, n: int = 3) -> str:
    return " | ".join(text.strip().splitlines()[-n:])[-500:]


def read_check_answer(
    what: str,
    *,
    returncode: int | None,
    stdout: str,
    stderr: str = "",
    timed_out: bool = False,
    timeout: float | None = None,
    payload: Literal["optional", "required"] = "optional",
) -> CheckAnswer:
    """The verdict of a check that ended as given.

    Args:
        what: The check, as errors name it (``tasks/x/verify.py``).
        returncode: Its exit code (None: killed).
        stdout: Its standard output; the last line may be the JSON answer.
        stderr: Its standard error (quoted when it crashed).
        timed_out: It was stopped at its time limit.
        timeout: That limit, in seconds (for the message).
        payload: ``required`` (hook checks): a last line that is not a JSON object is an
            error; ``optional`` (verify scripts): it is the detail as written.

    Raises:
        CheckAnswerError: there is no verdict (see the module docstring).
    """
    if timed_out:
        limit = f" after {timeout:g}s" if timeout is not None else ""
        raise CheckAnswerError(what, "timeout", f"timed out{limit}")
    if returncode == CRASH_EXIT:
        raise CheckAnswerError(what, "crash", f"crashed: {_tail(stderr or stdout)}")
    if returncode not in (0, 1):
        raise CheckAnswerError(
            what, "exit", f"exited {returncode}: {_tail(stderr or stdout)}".rstrip(": ")
        )
    by_code = returncode == 0
    lines = stdout.strip().splitlines()
    if not lines:
        return CheckAnswer(by_code, stderr.strip()[-500:] if payload == "required" else "")
    last = lines[-1].strip()
    try:
        doc = json.loads(last)
    except (json.JSONDecodeError, RecursionError):
        if payload == "required":
            raise CheckAnswerError(
                what,
                "shape",
                f"answered in an unexpected shape (not JSON): {last[:200]}",
            ) from None
        return CheckAnswer(by_code, last[:2000])
    if not isinstance(doc, dict):
        if payload == "required":
            raise CheckAnswerError(
                what,
                "shape",
                'answered in an unexpected shape: expected {"ok": bool, "diagnosis": str, '
                f'"next_action": str}}, got {last[:200]}',
            )
        return CheckAnswer(by_code, last[:2000])
    raw_detail = doc.get("detail", doc.get("diagnosis", ""))
    detail = (raw_detail if isinstance(raw_detail, str) else json.dumps(raw_detail))[:2000]
    next_action = str(doc.get("next_action", "") or "")[:1000]
    # "ok" (hook checks, verify scripts) or "passed" (registered state checks)
    keys = [k for k in ("ok", "passed") if k in doc]
    if not keys:
        return CheckAnswer(by_code, detail, next_action)
    ok = doc[keys[0]]
    if not isinstance(ok, bool) or any(doc[k] != ok for k in keys):
        raise CheckAnswerError(
            what,
            "shape",
            f'answered in an unexpected shape: "{keys[0]}" must be true or false (and '
            f'"ok" and "passed" the same), got {ok!r:.100}',
            detail,
        )
    if ok != by_code:
        raise CheckAnswerError(
            what,
            "disagree",
            f"exit code {returncode} says {'pass' if by_code else 'fail'} but its answer "
            f'says "{keys[0]}": {str(ok).lower()} — a check that contradicts itself gives no label '
            "(exit 0 when ok, 1 when not)",
            detail,
        )
    return CheckAnswer(ok, detail, next_action)


def finished_answer(
    what: str,
    res: Finished,
    *,
    timeout: float | None = None,
    payload: Literal["optional", "required"] = "optional",
) -> CheckAnswer:
    """:func:`read_check_answer` of a sandboxed command that has finished.

    Raises:
        CheckAnswerError: there is no verdict.
    """
    return read_check_answer(
        what,
        returncode=res.returncode,
        stdout=res.text(),
        stderr=res.text("stderr"),
        timed_out=res.timed_out,
        timeout=timeout,
        payload=payload,
    )
