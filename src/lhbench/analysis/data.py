"""Everything a report reads, loaded once from the store (or built directly in tests)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from lhbench.schema import Grade, Label, PreferenceVote, Rubric, Run, Task, Trajectory, Verdict
from lhbench.store import Store, group_key

__all__ = ["ReportData", "group_label"]


def group_label(run: Run, by: Sequence[str]) -> str:
    """Human label of a run's group, e.g. ``claude-code / anthropic:opus / skill=v1``."""
    parts = []
    for key in by:
        value = group_key(run, key)
        name = key.removeprefix("versions.")
        parts.append(f"{value}" if key in ("harness", "model") else f"{name}={value or '-'}")
    return " / ".join(parts)


@dataclass
class ReportData:
    """Runs, judgements and pack metadata, indexed for the report sections."""

    runs: dict[str, Run]
    grades: list[Grade] = field(default_factory=list)
    votes: list[PreferenceVote] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    tasks: dict[tuple[str, str], Task] = field(default_factory=dict)
    rubrics: dict[tuple[str, str], Rubric] = field(default_factory=dict)
    load_trajectory: Callable[[str], Trajectory] | None = None

    @classmethod
    def build(
        cls,
        runs: Iterable[Run],
        *,
        grades: Iterable[Grade] = (),
        votes: Iterable[PreferenceVote] = (),
        verdicts: Iterable[Verdict] = (),
        labels: Iterable[Label] = (),
        tasks: Iterable[tuple[str, Task]] = (),
        rubrics: Iterable[Rubric] = (),
        trajectories: dict[str, Trajectory] | None = None,
    ) -> ReportData:
        """Assemble from plain lists; ``tasks`` are (pack id, task) pairs."""
        return cls(
            runs={r.id: r for r in runs},
            grades=list(grades),
            votes=list(votes),
            verdicts=list(verdicts),
            labels=list(labels),
            tasks={(pack_id, t.id): t for pack_id, t in tasks},
            rubrics={(r.id, r.version): r for r in rubrics},
            load_trajectory=(
                (lambda run_id: trajectories.get(run_id) or Trajectory(run_id=run_id))
                if trajectories is not None
                else None
            ),
        )

    @classmethod
    def from_store(cls, store: Store) -> ReportData:
        """Load everything the report needs from ``store``."""
        tasks: list[tuple[str, Task]] = []
        rubrics: list[Rubric] = []
        for pack_id, _version, content_hash in store.list_pack_versions():
            pack = store.get_pack(content_hash)
            tasks.extend((pack_id, t) for t in pack.tasks)
            rubrics.extend(pack.rubrics)
        data = cls.build(
            store.list_runs(),
            grades=store.list_grades(),
            votes=store.list_votes(),
            verdicts=store.list_verdicts(),
            labels=store.list_labels(),
            tasks=tasks,
            rubrics=rubrics,
        )
        data.load_trajectory = store.get_trajectory
        return data

    def task_of(self, run: Run) -> Task | None:
        """The task a run was on, if its pack is stored."""
        return self.tasks.get((run.pack_id, run.task_id))

    @cached_property
    def _label_index(self) -> dict[str, bool]:
        best: dict[str, Label] = {}
        for lab in sorted(self.labels, key=lambda x: (not x.source.startswith("verify"), x.source)):
            best.setdefault(lab.run_id, lab)
        return {run_id: lab.passed for run_id, lab in best.items()}

    def label_of(self, run_id: str) -> bool | None:
        """The run's ground-truth outcome: a verify-script label wins over others."""
        return self._label_index.get(run_id)
