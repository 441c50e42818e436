"""Packs as jobs see them: found on disk (and registered by content hash), or in the store.

Every command that loads a pack from disk registers it in the store, so the store always
knows each pack's current content: analysis treats grades made with another rubric
content as stale. A pack known only to the store (its directory gone) is read from there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lhbench.config import Settings
from lhbench.errors import ConfigError, PackError, Problem
from lhbench.packs import bundled_pack_dirs, find_pack_dirs, load_pack, read_pack_id
from lhbench.packs.hashing import stat_tree
from lhbench.schema import Rubric, Run, Task, TaskPack, Tier
from lhbench.store import Store

__all__ = [
    "SKILL_DEFAULT",
    "SKILL_NONE",
    "LoadedPack",
    "PackChange",
    "all_pack_dirs",
    "check_versions",
    "find_rubric",
    "pack_for_id",
    "refresh_packs",
    "register_pack",
    "resolve_pack",
]

SKILL_DEFAULT = "default"
SKILL_NONE = "none"


@dataclass(frozen=True)
class LoadedPack:
    """A pack and where it lives (None: known only to the store)."""

    pack: TaskPack
    directory: Path | None

    def task_dir(self, task_id: str) -> Path | None:
        """The task's directory on disk, when the pack is on disk."""
        return None if self.directory is None else self.directory / "tasks" / task_id


def all_pack_dirs(settings: Settings) -> list[Path]:
    """The bundled packs' directories, then every pack under ``pack_paths``."""
    dirs = list(bundled_pack_dirs())
    for extra in settings.pack_paths:
        dirs.extend(find_pack_dirs(extra))
    return dirs


def _dir_for(ref: str, settings: Settings) -> Path | None:
    p = Path(ref)
    if (p / "pack.yaml").is_file():
        return p
    for d in all_pack_dirs(settings):
        if d.name == ref:
            return d
    for d in all_pack_dirs(settings):
        if read_pack_id(d) == ref:
            return d
    return None


def resolve_pack(ref: str, settings: Settings, store: Store | None = None) -> LoadedPack:
    """A pack by directory, bundled name, or id under ``pack_paths``; registered in ``store``.

    Raises:
        PackError: no such pack on disk (or a broken one: every problem listed).
    """
    directory = _dir_for(ref, settings)
    if directory is None:
        raise PackError(
            [
                Problem(
                    file=ref,
                    message="no such pack: give a pack directory, a bundled pack name, or "
                    "the id of a pack under pack_paths (`lhbench packs list` shows them)",
                )
            ]
        )
    pack = load_pack(directory)
    if store is not None:
        register_pack(store, pack, directory)
    return LoadedPack(pack, directory.resolve())


def register_pack(store: Store, pack: TaskPack, directory: Path) -> bool:
    """Register a pack loaded from ``directory`` as current, with where it came from.

    The directory and its files' stat hash are what :func:`refresh_packs` checks later.
    Returns :meth:`Store.save_pack`'s answer (False: this content was already stored).
    """
    return store.save_pack(
        pack, source_dir=str(directory.resolve()), disk_stat=stat_tree(directory)
    )


@dataclass(frozen=True)
class PackChange:
    """A registered pack whose directory no longer holds the registered content."""

    pack_id: str
    directory: str
    old_hash: str
    new_hash: str | None  # None: the directory no longer loads as a pack
    problems: int = 0

    @property
    def note(self) -> str:
        """What a report says about it."""
        if self.new_hash is None:
            return (
                f"Pack {self.pack_id}: its directory {self.directory} changed and no longer "
                f"loads ({self.problems} problem(s): `lhbench packs validate` lists them); "
                f"the figures use the registered version {self.old_hash[:12]}."
            )
        return (
            f"Pack {self.pack_id} changed on disk since it was registered ({self.directory}): "
            f"its current content ({self.new_hash[:12]}, was {self.old_hash[:12]}) is "
            "registered now, so grades, votes and check labels made with the old rubric or "
            "check content are stale and left out (`--include-stale` keeps them)."
        )


def refresh_packs(store: Store) -> list[PackChange]:
    """Check every registered pack against its directory; re-register what changed.

    A command that reads a pack's figures calls this first, so a rubric or ``verify.py``
    edited since the pack was registered is never read as current. Cheap when nothing
    changed: a pack's files are only stated (paths, sizes, modification times) and
    compared with the stat hash recorded at registration; only when that differs is the
    pack loaded and hashed. A directory gone (another machine's path, a deleted
    checkout) is left alone: the store's version is all there is.
    """
    changes = []
    for pack_id, (current, source, recorded) in store.pack_sources().items():
        if not source:
            continue
        directory = Path(source)
        if not (directory / "pack.yaml").is_file():
            continue
        now = stat_tree(directory)
        if now == recorded:
            continue
        try:
            pack = load_pack(directory)
        except PackError as exc:
            changes.append(PackChange(pack_id, source, current, None, len(exc.problems)))
            continue
        if pack.id != pack_id:
            continue
        if pack.content_hash == current:
            store.set_pack_stat(current, now)  # touched, not changed
            continue
        store.save_pack(pack, source_dir=source, disk_stat=now)
        changes.append(PackChange(pack_id, source, current, pack.content_hash))
    return changes


def pack_for_id(store: Store, settings: Settings, pack_id: str) -> LoadedPack | None:
    """The pack ``pack_id`` runs belong to, or None when neither disk nor store knows it.

    From disk when it is there (and registered as current), else the store's current version.
    """
    directory = _dir_for(pack_id, settings)
    if directory is not None:
        pack = load_pack(directory)
        if pack.id == pack_id:
            register_pack(store, pack, directory)
            return LoadedPack(pack, directory.resolve())
    current = store.latest_pack_hash(pack_id)
    return None if current is None else LoadedPack(store.get_pack(current), None)


def _skill_values(pack: TaskPack, tasks: list[Task]) -> set[str]:
    names = {s for t in tasks for s in t.skills}
    skills = [s for s in pack.skills if s.name in names]
    if not skills:
        return {SKILL_NONE}
    shared = set.intersection(*(set(s.versions) for s in skills))
    return shared | {SKILL_DEFAULT, SKILL_NONE}


def check_versions(
    pack: TaskPack, versions: dict[str, str], tasks: list[Task] | None = None
) -> dict[str, str]:
    """``versions`` checked against what the pack declares; the Run's versions dict.

    ``skill`` takes a variant every chosen task's skills have (``skills/NAME/versions/V.md``),
    ``default`` (SKILL.md) or ``none`` (no skill: the ablation baseline); other keys must be
    declared in pack.yaml ``versions:`` with their values. A task with skills and no
    ``skill`` key runs with ``skill=default``, and says so.

    Raises:
        ConfigError: an unknown key or value, naming what exists.
    """
    chosen = tasks if tasks is not None else pack.tasks
    known = {"skill": _skill_values(pack, chosen), **{k: set(v) for k, v in pack.versions.items()}}
    for key, value in versions.items():
        if key not in known:
            raise ConfigError(
                f"--versions {key}={value}: pack {pack.id!r} has no version key {key!r}; "
                f"known: {', '.join(sorted(known))} (declare others in pack.yaml `versions:`)"
            )
        if value not in known[key]:
            raise ConfigError(
                f"--versions {key}={value}: no such {key} version in pack {pack.id!r}; "
                f"available: {', '.join(sorted(known[key]))}"
            )
    out = dict(versions)
    if any(t.skills for t in chosen) and "skill" not in out:
        out["skill"] = SKILL_DEFAULT
    return out


def find_rubric(
    pack: TaskPack | None,
    rubric_id: str | None,
    tier: str,
    runs: list[Run],
    library: list[TaskPack] = (),  # type: ignore[assignment]
) -> tuple[Rubric, Tier]:
    """The rubric to grade with.

    ``rubric_id`` in the pack, then in the bundled library; without it, the first rubric
    of the runs' tasks that has the tier.

    Raises:
        ConfigError: no such rubric or tier, naming what exists.
    """
    candidates: dict[str, Rubric] = {}
    task_rubrics: list[str] = []
    if pack is not None:
        for r in pack.rubrics:
            candidates.setdefault(r.id, r)
        wanted = {r.task_id for r in runs}
        task_rubrics = [rid for t in pack.tasks if t.id in wanted for rid in t.rubrics]
    for lib in library:
        for r in lib.rubrics:
            candidates.setdefault(r.id, r)
    names = [rubric_id] if rubric_id else list(dict.fromkeys(task_rubrics))
    for name in names:
        rubric = candidates.get(name)
        if rubric is None:
            if rubric_id:
                raise ConfigError(
                    f"--rubric {rubric_id!r}: no such rubric "
                    f"(known: {', '.join(sorted(candidates))})"
                )
            continue
        try:
            return rubric, rubric.tier(tier)
        except KeyError:
            if rubric_id:
                raise ConfigError(
                    f"rubric {rubric_id!r} has no {tier!r} tier "
                    f"(it has {', '.join(t.kind.value for t in rubric.tiers)})"
                ) from None
    pack_id = pack.id if pack else "?"
    raise ConfigError(f"no rubric with a {tier!r} tier for pack {pack_id!r}: pass --rubric ID")
