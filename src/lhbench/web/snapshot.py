"""The overview's summary kept in the store across server starts.

Summarising 100,000 runs and a million grades from scratch takes about 10 s; a server
that restarts would make its first overview wait that long. A server instead saves its
summary (:class:`Snapshots`) in ``analysis_snapshots`` (migration 0021) after a full
summary and, now and then, after updates, at a quiet moment and never on a request's
path. At the next start it reads the snapshot back and brings it up to date with the
change log (migration 0020) like any later write.

The snapshot is in two parts: the *front*, the figures the overview shows (agents' rows,
notes, counts; a few hundred kB), and the *heavy* part, the per-run state later writes
update (tens of MB of Python objects, seconds to decode). With nothing written since the
snapshot, the first answer is the front alone while the heavy part is read on a thread;
the pages that need per-run figures, and the first update, wait for it. Otherwise the
heavy part is read at once and updated.

Encoding: pickle (zstd-compressed), the only decoder here fast enough for millions of
small objects — and a pickle is code, so one read from a database others can write to
would run what they put in it. Every snapshot is therefore signed (HMAC-SHA256) with a
key derived from the server's own secret (``<home>/web-secret``, mode 0600), and nothing
is unpickled unless the signature over all its fields checks. A snapshot made by another
lhbench version or at another schema, with a change log trimmed past its mark, or that
fails to decode is ignored and the store summarised from scratch.
"""

from __future__ import annotations

import gc
import hashlib
import hmac
import io
import json
import logging
import pickle
import threading
import time
from collections.abc import Iterator
from typing import Any, cast

import zstandard

from lhbench._version import __version__
from lhbench.store import Store
from lhbench.store.aggregates import AnalysisSnapshot
from lhbench.web.analysis import (
    Analysis,
    Restoring,
    _Summary,
    analyse,
    gc_paused,
    refresh,
)

__all__ = ["Snapshots"]

log = logging.getLogger(__name__)

FORMAT = 1
# the figures the overview reads; the rest of an Analysis is the heavy part
_FRONT = (
    "by",
    "tasks",
    "tier_keys",
    "excluded",
    "agents",
    "elo",
    "tier_notes",
    "judge_names",
    "grades_total",
    "grades_used",
    "votes",
    "parse_errors",
    "by_asked",
    "panel",
)
_LATER = ("runs", "scores", "labels", "verdicts", "current", "agent_of")


class _Later:
    """A per-run container of an analysis answered from a snapshot's front.

    Reads wait for the heavy part; only the runs' count is known at once (the overview
    shows it).
    """

    def __init__(self, restoring: Restoring, name: str, size: int | None) -> None:
        self._restoring, self._name, self._size = restoring, name, size

    def _real(self) -> Any:
        return getattr(self._restoring.wait(), self._name)

    def __len__(self) -> int:
        return self._size if self._size is not None else len(self._real())

    def __getitem__(self, key: Any) -> Any:
        return self._real()[key]

    def __iter__(self) -> Iterator[Any]:
        return iter(self._real())

    def __contains__(self, key: object) -> bool:
        return key in self._real()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real(), name)


class _Yielding:
    """A stream that lets other threads run between the pickle's frames (64 kB each).

    Pickling or unpickling 100,000 runs holds the interpreter for seconds in C; a request
    arriving meanwhile would wait for all of it. Each frame read or written is a call
    into this object, where the thread gives the interpreter up for a moment. The frames
    go through zstd as they come: no 110 MB pickle is ever held whole.
    """

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def read(self, size: int = -1, /) -> bytes:
        time.sleep(0)
        if size < 0:
            return bytes(self.raw.read())
        parts, want = [], size
        while want > 0:  # a decompressing reader may return less than asked
            part = self.raw.read(want)
            if not part:
                break
            parts.append(part)
            want -= len(part)
        return b"".join(parts)

    def readline(self, size: int = -1, /) -> bytes:
        raise pickle.UnpicklingError("a snapshot holds no text-protocol pickle")

    def write(self, data: Any, /) -> int:
        time.sleep(0)
        return int(self.raw.write(data))


def _pack(obj: Any) -> bytes:
    out = io.BytesIO()
    with zstandard.ZstdCompressor(level=3).stream_writer(out, closefd=False) as z:
        pickle.Pickler(_Yielding(z), protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return out.getvalue()


def _unpack(blob: bytes) -> Any:
    with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(blob)) as z:
        return pickle.Unpickler(_Yielding(z)).load()  # signed: see Snapshots.restore


class Snapshots:
    """Saves and restores one server's overview summaries (one per grouping and panel).

    Args:
        store: The store the summaries are of and kept in.
        secret: The server's secret; the signing key is derived from it, and the
            snapshot's name from the key, so servers with other secrets sharing the
            store keep snapshots of their own and never decode each other's.
        save_every: Seconds between saves after updates (a full summary saves at once).
        quiet: Seconds without a request before a save starts (encoding 100,000
            runs takes seconds of the interpreter's time, which requests would share).
    """

    def __init__(
        self, store: Store, secret: str, *, save_every: float = 600.0, quiet: float = 10.0
    ) -> None:
        self.store = store
        self._key = hmac.new(secret.encode(), b"lhbench analysis snapshot", "sha256").digest()
        self._key_id = hashlib.sha256(self._key).hexdigest()[:24]
        self.save_every, self.quiet = save_every, quiet
        self._asked = time.monotonic()
        self._saved_at = -float("inf")
        self._saved: dict[str, int] = {}  # name → mark last saved
        self._due: dict[str, _Summary] = {}
        self._latest: dict[str, _Summary] = {}
        self._save_lock = threading.Lock()  # the saver's and close()'s saves, one at a time
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None

    def name(self, by: tuple[str, ...] | None, panel: set[str] | None) -> str:
        """This server's snapshot name for a grouping and a judge panel."""
        what = json.dumps([list(by) if by else None, sorted(panel) if panel else None])
        return f"{self._key_id}:{hashlib.sha256(what.encode()).hexdigest()[:24]}"

    def _mac(self, name: str, mark: int, version: str, schema: str, *blobs: bytes) -> str:
        header = json.dumps([FORMAT, name, mark, version, schema]).encode()
        mac = hmac.new(self._key, header, "sha256")
        for blob in blobs:
            mac.update(len(blob).to_bytes(8, "big"))
            mac.update(blob)
        return mac.hexdigest()

    # ---------------------------------------------------------------- restoring

    def restore(self, by: tuple[str, ...] | None, panel: set[str] | None) -> Analysis | None:
        """The analysis from this server's snapshot, up to date (None: summarise afresh)."""
        name = self.name(by, panel)
        try:
            snap = self.store.analysis_snapshot(name)
        except Exception:  # a store without the table, a broken row
            log.warning("the overview's snapshot could not be read", exc_info=True)
            return None
        if snap is None:
            return None
        if snap.lhbench_version != __version__ or snap.schema_revision != (
            self.store.schema_revision()
        ):
            return None
        want = self._mac(
            name, snap.mark, snap.lhbench_version, snap.schema_revision, snap.front, snap.heavy
        )
        if not hmac.compare_digest(want, snap.mac):
            log.warning("the overview's snapshot %s is not signed by this server: ignored", name)
            return None
        changes = self.store.changes_since(snap.mark)
        if changes.whole - {"votes"} or changes.trimmed > snap.mark:
            return None  # runs or packs changed, or the log no longer reaches back
        try:
            if changes.mark == snap.mark and not changes.whole and not changes.runs:
                out = self._front(snap)
            else:
                with gc_paused():  # refresh freezes what it made, collected by none
                    out = refresh(self.store, self._heavy(snap.heavy).analysis())
        except Exception:  # signed by us, but e.g. made by another build
            log.warning("the overview's snapshot could not be decoded", exc_info=True)
            return None
        self._saved[name] = snap.mark
        return out

    @staticmethod
    def _heavy(blob: bytes) -> _Summary:
        with gc_paused():
            state = _unpack(blob)
            if not isinstance(state, dict):
                raise TypeError("a snapshot's state is not a dict")
            return _Summary.from_state(state)

    def _front(self, snap: AnalysisSnapshot) -> Analysis:
        """The overview's figures at once; the per-run state read on a thread."""
        front = _unpack(snap.front)
        if not isinstance(front, dict):
            raise TypeError("a snapshot's front is not a dict")
        restoring = Restoring()
        fields = {k: front[k] for k in _FRONT if k not in ("by_asked", "panel")}
        later = {
            k: cast(Any, _Later(restoring, k, front["n_runs"] if k == "runs" else None))
            for k in _LATER
        }
        out = Analysis(**fields, **later)
        out.by_asked, out.panel, out._restoring = front["by_asked"], front["panel"], restoring
        # what the overview would otherwise read the per-run state for
        vars(out)["task_count"] = front["task_count"]
        vars(out)["verdict_count"] = front["verdict_count"]
        out._options[" default tier"] = front["default_tier"]

        def read() -> None:
            try:
                with gc_paused():
                    full = self._heavy(snap.heavy).analysis()
                    # millions of long-lived objects out of the collector's way (as analyse()
                    # does), before it runs again: its first young collection would walk
                    # them all (1.8 s with every other thread waiting)
                    gc.freeze()
            except Exception:
                log.warning("the overview's snapshot could not be decoded", exc_info=True)
                full = analyse(self.store, by=out.by_asked, panel=out.panel)
                # its figures may differ from the front's only if the snapshot lied
            for k in _LATER:
                setattr(out, k, getattr(full, k))
            out._summary = full._summary
            restoring.analysis = full
            restoring.done.set()

        threading.Thread(target=read, name="lhbench-snapshot-read", daemon=True).start()
        return out

    # ---------------------------------------------------------------- saving

    def asked(self) -> None:
        """A request came in (a save waits for a quiet moment)."""
        self._asked = time.monotonic()

    def offer(self, analysis: Analysis) -> None:
        """A new or updated summary: saved after a full one, or when the last is old."""
        summary = analysis._summary
        if summary is None:
            return
        name = self.name(analysis.by_asked, analysis.panel)
        self._latest[name] = summary
        if self._saved.get(name) == summary.mark:
            return
        full = not getattr(summary, "_offered", False)
        if not full and time.monotonic() - self._saved_at < self.save_every:
            return
        summary._offered = True  # type: ignore[attr-defined]
        with self._cv:
            self._due[name] = summary
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._saver, name="lhbench-snapshot-save", daemon=True
                )
                self._thread.start()
            self._cv.notify_all()

    def _saver(self) -> None:
        while True:
            with self._cv:
                while not self._due:
                    self._cv.wait()
            while (wait := self.quiet - (time.monotonic() - self._asked)) > 0:
                time.sleep(wait)
            with self._cv:
                name, summary = self._due.popitem()
            try:
                self.save(name, summary)
            except Exception:  # the next offer tries again
                log.warning("the overview's snapshot could not be saved", exc_info=True)

    def close(self) -> None:
        """Save every summary newer than its snapshot (the server is stopping)."""
        for name, summary in list(self._latest.items()):
            if self._saved.get(name) != summary.mark:
                try:
                    self.save(name, summary)
                except Exception:
                    log.warning("the overview's snapshot could not be saved", exc_info=True)

    def save(self, name: str, summary: _Summary) -> int:
        """Encode, sign and store ``summary`` now; its size in bytes (0: not saved)."""
        with self._save_lock:
            return self._save(name, summary)

    def _save(self, name: str, summary: _Summary) -> int:
        with summary.lock:
            if not summary.valid:
                return 0  # an update gave up on it half-way
            mark = summary.mark
            state = summary.state()
            full = summary.analysis()
        front: dict[str, Any] = {k: getattr(full, k) for k in _FRONT}
        front.update(
            n_runs=len(full.runs),
            task_count=full.task_count,
            verdict_count=full.verdict_count,
            default_tier=full.default_tier(),
        )
        front_blob, heavy_blob = _pack(front), _pack(state)
        version, schema = __version__, self.store.schema_revision()
        self.store.save_analysis_snapshot(
            AnalysisSnapshot(
                name=name,
                mark=mark,
                lhbench_version=version,
                schema_revision=schema,
                mac=self._mac(name, mark, version, schema, front_blob, heavy_blob),
                front=front_blob,
                heavy=heavy_blob,
            )
        )
        self._saved[name], self._saved_at = mark, time.monotonic()
        return len(front_blob) + len(heavy_blob)
