"""Acme's lhbench plugin: the acme-log transcript format and two state checks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lhbench.ingest.base import TranscriptInfo
from lhbench.plugins import CheckResult
from lhbench.schema import Role, RunStatus, Step, StepKind, Usage

SECRET = Path("/var/tmp/acme-lhbench-secret.txt")
_ROLES = {"user": Role.USER, "bot": Role.ASSISTANT}


class AcmeLog:
    """One JSON object per line: {"acme": 1, "who": "user"|"bot"|"call"|"result", ...}."""

    name = "acme-log"
    harness = "acme-agent"

    def sniff(self, head: list[dict[str, Any]]) -> bool:
        return bool(head) and head[0].get("acme") == 1

    def read(self, path: Path) -> Iterator[tuple[TranscriptInfo, list[Step]]]:
        steps: list[Step] = []
        info = TranscriptInfo(source=str(path))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            rec = json.loads(line)
            at = datetime.fromtimestamp(rec["t"], UTC)
            info.started_at = info.started_at or at
            info.ended_at = at
            who = rec["who"]
            if who in _ROLES:
                steps.append(
                    Step(
                        index=0,
                        role=_ROLES[who],
                        kind=StepKind.MESSAGE,
                        content=rec["text"],
                        timestamp=at,
                    )
                )
            elif who == "call":
                steps.append(
                    Step(
                        index=0, role=Role.ASSISTANT, kind=StepKind.TOOL_CALL,
                        tool_name=rec["tool"], tool_call_id=rec["id"], tool_input=rec["args"],
                        timestamp=at,
                    )
                )  # fmt: skip
            elif who == "result":
                steps.append(
                    Step(
                        index=0, role=Role.TOOL, kind=StepKind.TOOL_RESULT, tool_call_id=rec["id"],
                        tool_output=rec["out"], is_error=rec.get("error", False), timestamp=at,
                    )
                )  # fmt: skip
            elif who == "end":
                info.model = rec["model"]
                info.status = RunStatus.COMPLETED if rec["ok"] else RunStatus.FAILED
                info.usage = Usage(input_tokens=rec["in"], output_tokens=rec["out"])
            else:
                raise ValueError(f"line {n}: unknown 'who' {who!r}")
        yield info, steps


ACME_LOG = AcmeLog()
FAKE_CODEX = AcmeLog()
FAKE_CODEX.name = "codex"


class ReadmeCheck:
    """Passes when the final state has a README.md that mentions acme."""

    name = "acme-readme"
    version = "0.3.1"
    description = "README.md exists and mentions acme"

    def __call__(self, root: Path | None, db_url: str | None) -> CheckResult:
        readme = (root or Path(".")) / "README.md"
        if not readme.is_file():
            return CheckResult(False, "no README.md")
        ok = "acme" in readme.read_text(encoding="utf-8", errors="replace").lower()
        return CheckResult(ok, "mentions acme" if ok else "README.md does not mention acme")


class SnoopCheck:
    """Tries to read a host file outside the state (in the sandbox it must not be able to)."""

    name = "acme-snoop"
    version = "0.3.1"
    description = "passes if it can read SECRET, a host path outside the state"

    def __call__(self, root: Path | None, db_url: str | None) -> CheckResult:
        target = SECRET
        try:
            text = target.read_text()
        except OSError as exc:
            return CheckResult(False, f"blocked: {type(exc).__name__}")
        return CheckResult(True, f"read the host file: {text[:40]}")


CHECKS = [ReadmeCheck(), SnoopCheck()]
