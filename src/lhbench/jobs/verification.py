"""Verification: a task's checks run on every run's final state, each storing a Label.

The checks are the task's ``verify`` script (``environment.verify``, default ``verify.py``)
and its declared hook checks, run on the kept workspace of a run lhbench ran, or on the
replayed state of an imported one. A check that crashes, times out or answers in a shape
it should not gives an undecided label with the reason: the job goes on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lhbench.envs import ReplayError, VerifyError, run_verify
from lhbench.jobs.runner import Assessment, Unit
from lhbench.jobs.states import StateProvider
from lhbench.schema import Label, Run, Task, label_key
from lhbench.store import ResultState, Store

__all__ = ["Check", "VerifyJob", "task_checks"]


@dataclass(frozen=True)
class Check:
    """One check of a task: its script, the label source it writes, its content hash."""

    script: Path
    source: str
    check_hash: str
    hook: bool = False


def task_checks(task: Task, task_dir: Path | None) -> list[Check]:
    """The task's checks: its verify script first, then its hook checks (deduplicated)."""
    if task_dir is None:
        return []
    out: list[Check] = []
    verify = task_dir / (task.environment.verify or "verify.py")
    if verify.is_file():
        out.append(Check(verify, f"verify:{task.id}/{verify.name}", task.content_hash))
    seen = set()
    for h in task.environment.hooks:
        if h.check in seen:
            continue
        seen.add(h.check)
        script = task_dir / h.check
        if script.is_file():
            out.append(Check(script, f"check:{task.id}/{h.check}", task.content_hash, hook=True))
    return out


@dataclass(frozen=True)
class _CheckUnit:
    run: Run
    check: Check


class VerifyJob:
    """Every run × check of its task (the Job protocol)."""

    name = "verify"

    def __init__(
        self,
        store: Store,
        runs: Sequence[Run],
        states: StateProvider,
        *,
        timeout_s: float = 60.0,
    ) -> None:
        self.store = store
        self.runs = list(runs)
        self.states = states
        self.timeout_s = timeout_s

    def plan(self) -> list[Unit[_CheckUnit]]:
        """One unit per run and check."""
        out = []
        for run in self.runs:
            task = self.states.task(run)
            if task is None:
                continue
            for check in task_checks(task, self.states.pack.task_dir(task.id)):
                key = label_key(run.id, check.source, check.check_hash)
                out.append(Unit(key, f"{run.id} · {check.source}", _CheckUnit(run, check)))
        return out

    def stored(self, keys: Sequence[str]) -> Mapping[str, ResultState]:
        """Labels whose check content is current; an undecided label is a final failure."""
        wanted = set(keys)
        out: dict[str, ResultState] = {}
        for lab in self.store.list_labels(run_ids=[r.id for r in self.runs]):
            key = label_key(lab.run_id, lab.source, lab.check_hash)
            if key in wanted:
                out[key] = "ok" if lab.passed is not None else "final_error"
        return out

    async def run(self, unit: Unit[_CheckUnit]) -> Label:
        """Run one check on the run's final state."""
        run, check = unit.payload.run, unit.payload.check
        try:
            state = await self.states.get(run)
        except (LookupError, OSError, ValueError, ReplayError) as exc:
            return self._label(run, check, None, "", f"no final state: {exc}")
        if check.hook:
            return await asyncio.to_thread(self._hook, run, check, state.ref.root)
        try:
            res = await asyncio.to_thread(
                run_verify,
                check.script,
                root=state.ref.root,
                db_url=state.ref.db_url,
                timeout=self.timeout_s,
                sandbox=self.states.sandbox,
            )
        except VerifyError as exc:
            return self._label(run, check, None, "", str(exc))
        detail = res.detail
        if state.skipped:
            detail += f" (replay skipped {len(state.skipped)} call(s): {state.skipped[0]})"
        return self._label(run, check, res.passed, detail, None)

    def _hook(self, run: Run, check: Check, root: Path | None) -> Label:
        from lhbench.harness.hooks import run_hooks
        from lhbench.schema import HookSpec

        if root is None:
            return self._label(run, check, None, "", "hook checks need a directory state")
        spec = HookSpec(after_tool="*", check=check.script.name, timeout_s=self.timeout_s)
        [res] = run_hooks([spec], "*", check.script.parent, root, sandbox=self.states.sandbox)
        if res.diagnosis.startswith(("the check could not run", "the check timed out")):
            return self._label(run, check, None, "", res.diagnosis)
        return self._label(run, check, res.ok, res.diagnosis, None)

    @staticmethod
    def _label(
        run: Run, check: Check, passed: bool | None, detail: str, error: str | None
    ) -> Label:
        return Label(
            run_id=run.id,
            passed=passed,
            source=check.source,
            detail=detail[:2000],
            error=error[:2000] if error else None,
            check_hash=check.check_hash,
        )

    def assess(self, result: Label) -> Assessment:
        """A decided label is ok (pass or fail alike); an undecided one says why."""
        if result.passed is not None:
            return Assessment(True)
        reason = (result.error or "check failed").split(":", 1)[0]
        if "timed out" in (result.error or ""):
            reason = "check timed out"
        elif "exited" in (result.error or ""):
            reason = "check crashed"
        return Assessment(False, reason)

    def write(self, results: Sequence[Label]) -> None:
        """Labels, replacing what the same check said before."""
        self.store.save_labels(results)
