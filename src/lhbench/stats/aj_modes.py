"""AJ-Bench's failure modes (A.7) of a wrong agent verdict, where a rule can tell them.

(a) the judge called no tool; (b) it called tools, none of which read this environment's
final state. (c) misread tool output and (d) wrong reasoning need a reviewer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from lhbench._gc import collector_paused
from lhbench.schema import EnvironmentKind, JudgeKind

if TYPE_CHECKING:
    from lhbench.store import LabelFact, Store, VerdictDetail

__all__ = ["JUDGE_STATE_TOOLS", "VerdictReads", "failure_mode", "verdict_failure_modes"]


class _JudgeLike(Protocol):
    @property
    def kind(self) -> JudgeKind: ...


class _VerdictLike(Protocol):
    """What the rule reads of a verdict (a ``Verdict`` or the store's ``VerdictDetail``)."""

    @property
    def verdict(self) -> str | None: ...
    @property
    def failure_mode(self) -> str | None: ...
    @property
    def judge(self) -> _JudgeLike: ...
    @property
    def tools_used(self) -> Sequence[str]: ...


# the tools that read each environment's final state (anything else is mode (b))
JUDGE_STATE_TOOLS: dict[str, frozenset[str]] = {
    EnvironmentKind.FILESYSTEM.value: frozenset(
        {"list_directory", "directory_tree", "read_file", "search_files", "get_file_info"}
    ),
    EnvironmentKind.SQL.value: frozenset({"list_tables", "describe_table", "query"}),
    EnvironmentKind.WEB.value: frozenset({"search", "open_url", "find_in_page"}),
    EnvironmentKind.GUI.value: frozenset(
        {"document_info", "render_pages", "read_document", "view_screenshot", "view_a11y_tree"}
    ),
}


def failure_mode(verdict: _VerdictLike, label: bool, kind: str | None) -> str | None:
    """The AJ-Bench A.7 mode of a wrong verdict: its stored tag, else (a)/(b) by rule.

    (a) an agent judge that called no tool; (b) one whose tools never read this
    environment's state. (c) and (d) need a reviewer's tag (``lhbench aj tag``).
    """
    if verdict.verdict is None or (verdict.verdict == "PASS") == label:
        return None
    if verdict.failure_mode:
        return verdict.failure_mode
    if verdict.judge.kind.value != "agent":
        return None
    if not verdict.tools_used:
        return "a"
    if kind in JUDGE_STATE_TOOLS and not set(verdict.tools_used) & JUDGE_STATE_TOOLS[kind]:
        return "b"
    return None


@dataclass(frozen=True)
class VerdictReads:
    """One read of the columns the Agent-as-a-Judge figures need, shared by its consumers.

    ``lhbench aj score`` makes its tables and counts its failure modes from one read of
    every run's place, label outcome and verdict (a team's store: 100,000 of each).
    """

    places: list[tuple[str, str, str, str, str | None]]
    labels: list[LabelFact]
    verdicts: list[VerdictDetail]

    @classmethod
    @collector_paused()  # hundreds of thousands of small long-lived objects
    def of(cls, store: Store) -> VerdictReads:
        """Read them from ``store``."""
        return cls(store.run_places(), store.label_facts(), store.verdict_details())


@collector_paused()  # a team's store: every run's place, label and agent verdict
def verdict_failure_modes(
    store: Store, *, pack_id: str | None = None, reads: VerdictReads | None = None
) -> dict[str, tuple[str, bool]]:
    """Each wrong agent verdict's failure mode: verdict id -> (mode, whether it is stored).

    A stored tag (a reviewer's, or an earlier rule's) wins; otherwise AJ-Bench's rule
    (:func:`failure_mode`) decides (a) or (b) where it can tell, from the run's label and
    its task's environment (the task's own, or its pack's). Read lean: runs' columns,
    labels' outcomes and verdicts' fields (``reads``, when already made), no run document.
    """
    from lhbench.errors import StoreError

    reads = reads or VerdictReads.of(store)
    labels = {lab.run_id: lab.passed for lab in reads.labels if lab.passed is not None}
    runs = {
        rid: (pack_hash, task_id)
        for rid, pid, task_id, pack_hash, _kind in reads.places
        if pack_id is None or pid == pack_id
    }
    kinds: dict[tuple[str, str], EnvironmentKind] = {}
    # a pack's environment, read once per pack (not once per task: a pack is a whole document)
    pack_kinds: dict[str, EnvironmentKind] = {}
    out: dict[str, tuple[str, bool]] = {}
    for v in reads.verdicts:
        if v.judge.kind != JudgeKind.AGENT:
            continue
        where = runs.get(v.run_id)
        if where is None or v.run_id not in labels:
            continue
        if v.failure_mode:
            out[v.id] = (v.failure_mode, True)
            continue
        if where not in kinds:
            pack_hash = where[0]
            task = store.get_task(*where)
            if pack_hash not in pack_kinds:
                try:
                    pack_kinds[pack_hash] = store.get_pack(pack_hash).environment
                except StoreError:
                    pack_kinds[pack_hash] = EnvironmentKind.FILESYSTEM
            kinds[where] = (task.environment.kind if task else None) or pack_kinds[pack_hash]
        mode = failure_mode(v, bool(labels[v.run_id]), kinds[where].value)
        if mode is not None:
            out[v.id] = (mode, False)
    return out
