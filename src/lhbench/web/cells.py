"""A summary's grade cells and per-run panel scores as columns, updated run by run.

At 100,000 runs a summary holds about 600,000 grade cells (one run's sums per rubric
content, tier and judge config) and 200,000 per-run panel scores. As dicts of lists and
objects, building them was most of a restarted server's start (seconds of CPU, while its
first requests waited for the interpreter). Here the cells are numpy columns, the scores
a :class:`~lhbench.judges.PanelScoreTable` per tier, and a run written to since is held
beside them as the dict (or score) the incremental update makes for it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from operator import itemgetter

import numpy as np
from numpy.typing import NDArray

from lhbench.judges import PanelScoreTable, RunTierScore
from lhbench.store.aggregates import CellKey

__all__ = ["Cell", "GradeCells", "Part", "TierScores"]

# a cell without its run: (rubric id, version, content hash, tier, judge config)
Part = tuple[str, str, str, str, str]
# a cell's sums, in the store's ``CELL_*`` order
Cell = list[float]
# the store's cells have seven sums
_WIDTH = 7
_RUN = itemgetter(0)
_PART = itemgetter(1, 2, 3, 4, 5)


class GradeCells:
    """Grade cells: per run, its parts' sums (what :meth:`Store.grade_summary` reads).

    ``runs`` and ``parts`` name the columns' indices; ``values[i]`` is cell ``i``'s sums
    (float64, in ``CELL_*`` order: the counts are far below 2**53, so exact), rows grouped
    by run in ascending ``run``. A run whose cells were replaced (:meth:`replace`) is
    read from its dict, its rows no longer.
    """

    def __init__(
        self,
        runs: list[str],
        parts: list[Part],
        run: NDArray[np.int64],
        part: NDArray[np.int64],
        values: NDArray[np.float64],
    ) -> None:
        if run.size > 1 and bool(np.any(run[1:] < run[:-1])):
            order = np.argsort(run, kind="stable")
            run, part, values = run[order], part[order], values[order]
        self.runs, self.parts = runs, parts
        self.run, self.part, self.values = run, part, values
        self.index = dict(zip(runs, range(len(runs)), strict=True))
        # run i's rows: start[i] up to start[i + 1]
        self.start = np.searchsorted(run, np.arange(len(runs) + 1)).tolist()
        self.replaced: dict[str, dict[Part, Cell]] = {}

    @classmethod
    def empty(cls) -> GradeCells:
        """No cells."""
        return cls([], [], np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, _WIDTH)))

    @classmethod
    def from_flat(cls, flat: dict[CellKey, Cell]) -> GradeCells:
        """The cells of a flat ``(run, *part) -> sums`` dict (emptied as it is read)."""
        keys = list(flat)
        values = np.array(list(flat.values()), dtype=np.float64).reshape(len(keys), _WIDTH)
        flat.clear()
        runs: dict[str, int] = {}
        parts: dict[Part, int] = {}
        run = np.fromiter(
            (runs.setdefault(r, len(runs)) for r in map(_RUN, keys)), np.int64, len(keys)
        )
        part = np.fromiter(
            (parts.setdefault(p, len(parts)) for p in map(_PART, keys)), np.int64, len(keys)
        )
        return cls(list(runs), list(parts), run, part, values)

    def get(self, run_id: str) -> dict[Part, Cell]:
        """The run's cells (a new dict, or the one it was replaced with)."""
        mine = self.replaced.get(run_id)
        if mine is not None:
            return mine
        i = self.index.get(run_id)
        if i is None:
            return {}
        lo, hi = self.start[i], self.start[i + 1]
        parts = self.parts
        return {
            parts[p]: c
            for p, c in zip(self.part[lo:hi].tolist(), self.values[lo:hi].tolist(), strict=True)
        }

    def replace(self, run_id: str, cells: dict[Part, Cell]) -> dict[Part, Cell]:
        """Give the run these cells (maybe none); its cells before are returned."""
        old = self.get(run_id)
        self.replaced[run_id] = cells
        return old

    def row_is_read(self) -> NDArray[np.bool_]:
        """Per row: whether it is still the run's (its run not replaced since)."""
        keep = np.ones(len(self.runs), dtype=np.bool_)
        gone = [i for r in self.replaced if (i := self.index.get(r)) is not None]
        keep[gone] = False
        return np.asarray(keep[self.run], dtype=np.bool_)

    def columns(
        self,
    ) -> tuple[list[str], list[Part], NDArray[np.int64], NDArray[np.int64], NDArray[np.float64]]:
        """Every current cell as columns (the replaced runs' cells after the others)."""
        if not self.replaced:
            return self.runs, self.parts, self.run, self.part, self.values
        read = self.row_is_read()
        runs, parts = list(self.runs), list(self.parts)
        run_at, part_at = dict(self.index), {p: i for i, p in enumerate(parts)}
        extra_run: list[int] = []
        extra_part: list[int] = []
        extra_values: list[Cell] = []
        for run_id, cells in self.replaced.items():
            for p, c in cells.items():
                if run_id not in run_at:
                    run_at[run_id] = len(runs)
                    runs.append(run_id)
                if p not in part_at:
                    part_at[p] = len(parts)
                    parts.append(p)
                extra_run.append(run_at[run_id])
                extra_part.append(part_at[p])
                extra_values.append(c)
        return (
            runs,
            parts,
            np.concatenate([self.run[read], np.array(extra_run, dtype=np.int64)]),
            np.concatenate([self.part[read], np.array(extra_part, dtype=np.int64)]),
            np.concatenate(
                [self.values[read], np.array(extra_values, dtype=np.float64).reshape(-1, _WIDTH)]
            ),
        )


class TierScores(Mapping[str, RunTierScore]):
    """Run id -> its panel score on one tier: a table's rows, and the runs written to since.

    Built from the cells' columns (:class:`PanelScoreTable`, judges by name, no dimension
    means: the store's sums have none); a run scored again is held as its RunTierScore,
    one no longer scored as None. :meth:`copy` is what a published analysis keeps.
    """

    def __init__(self, table: PanelScoreTable) -> None:
        self.table = table
        self.row = dict(zip(table.run_ids, range(len(table.run_ids)), strict=True))
        self.written: dict[str, RunTierScore | None] = {}
        self._n = len(table.run_ids)

    def copy(self) -> TierScores:
        """The scores as they are now (later writes to this one are not seen)."""
        out = TierScores.__new__(TierScores)
        out.table, out.row, out.written, out._n = self.table, self.row, dict(self.written), self._n
        return out

    def _has(self, run_id: str) -> bool:
        if run_id in self.written:
            return self.written[run_id] is not None
        return run_id in self.row

    def __contains__(self, run_id: object) -> bool:
        return isinstance(run_id, str) and self._has(run_id)

    def __getitem__(self, run_id: str) -> RunTierScore:
        if run_id in self.written:
            s = self.written[run_id]
            if s is None:
                raise KeyError(run_id)
            return s
        r = self.row[run_id]
        t = self.table
        has = t.has_judge[r].tolist()
        vals = t.judge_scores[r].tolist()
        return RunTierScore(
            run_id,
            {j: vals[c] for c, j in enumerate(t.judges) if has[c]},
            {},
            float(t.mean[r]),
            float(t.variance[r]),
        )

    def __iter__(self) -> Iterator[str]:
        for run_id in self.row:
            if run_id not in self.written:
                yield run_id
        for run_id, s in self.written.items():
            if s is not None:
                yield run_id

    def __len__(self) -> int:
        return self._n

    def __setitem__(self, run_id: str, score: RunTierScore) -> None:
        if not self._has(run_id):
            self._n += 1
        self.written[run_id] = score

    def pop(self, run_id: str) -> None:
        """The run's score gone (until set again)."""
        if self._has(run_id):
            self._n -= 1
        self.written[run_id] = None

    def scored(self, run_ids: Sequence[str]) -> list[str]:
        """Those of ``run_ids`` with a score here, in their order."""
        if not self.written:
            row = self.row
            return [r for r in run_ids if r in row]
        return [r for r in run_ids if self._has(r)]

    def table_of(self, run_ids: Sequence[str]) -> PanelScoreTable:
        """These runs' scores as a table, in their order (each must have one).

        The table's rows, with the rows of runs scored since written over them (the tier's
        judges as columns: a judge none of these runs has is a column nobody fills, which
        the leaderboard's figures skip).
        """
        t = self.table
        at = [i for i, r in enumerate(run_ids) if r in self.written]
        if not at:
            return t.take(np.array([self.row[r] for r in run_ids], dtype=np.intp))
        col = {j: c for c, j in enumerate(t.judges)}
        mine = [self[run_ids[i]] for i in at]
        if not t.run_ids or any(j not in col for s in mine for j in s.judge_scores):
            return PanelScoreTable.of([self[r] for r in run_ids])
        out = replace(
            t.take(np.array([self.row.get(r, 0) for r in run_ids], dtype=np.intp)),
            run_ids=list(run_ids),
        )
        for i, s in zip(at, mine, strict=True):
            out.judge_scores[i], out.has_judge[i] = 0.0, False
            for j, v in s.judge_scores.items():
                out.judge_scores[i, col[j]], out.has_judge[i, col[j]] = v, True
            out.mean[i], out.variance[i] = s.mean, s.variance
        return out
