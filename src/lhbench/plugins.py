"""Plugins by entry points: transcript formats, CLI harnesses, state checks, environments.

A package extends lhbench by declaring entry points (``importlib.metadata``) in these
groups; lhbench's own formats and harnesses are registered the same way (see
``pyproject.toml``)::

    [project.entry-points."lhbench.formats"]
    acme-log = "acme_lhbench:ACME_LOG"        # a TranscriptReader (or an ingest Format)

    [project.entry-points."lhbench.checks"]
    acme-readme = "acme_lhbench:README_CHECK" # a StateCheck (or a jobs.checks.TaskCheck)

    [project.entry-points."lhbench.harnesses"]
    acme-cli = "acme_lhbench:ACME_CLI"        # a harness.cli_agents.CliAgent

    [project.entry-points."lhbench.environments"]
    acme-sheets = "acme_lhbench:SHEETS"       # a jobs.environments.Environment

An entry point's object may also be a list of them. Built-ins are loaded first and a
plugin can never replace one: a clash, a plugin that fails to import, or an object of
the wrong kind is recorded against the plugin (``lhbench plugins list`` shows it) and
lhbench goes on without it.

The checks group holds lhbench's own checks too (the verify script, hook checks, the
Figma and content checks: :mod:`lhbench.jobs.checks`, each a ``TaskCheck`` the verify job
plans per task and runs). A plugin's check is either such a ``TaskCheck`` or, simpler, a
:class:`StateCheck`, which runs where verify scripts run, in the sandbox:
``python -m lhbench.plugins check NAME --root DIR [--db URL]`` loads the check there,
calls it on the run's final state and answers with verify's protocol (exit 0 pass, 1
fail, the last stdout line a JSON ``{"passed", "detail"}``). A task asks for checks by
name in ``environment.checks``; an unknown name is a pack error.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from lhbench.ingest.base import TranscriptInfo
    from lhbench.schema import Step

__all__ = [
    "GROUPS",
    "CheckResult",
    "PluginInfo",
    "RegisteredCheck",
    "Registry",
    "StateCheck",
    "TranscriptReader",
    "check_registry",
]

GROUPS = {
    "formats": "lhbench.formats",
    "harnesses": "lhbench.harnesses",
    "checks": "lhbench.checks",
    "environments": "lhbench.environments",
}
_SELF = "lhbench"

T = TypeVar("T")


@dataclass(frozen=True)
class CheckResult:
    """A state check's answer: passed or not, and what it saw."""

    passed: bool
    detail: str = ""


@runtime_checkable
class RegisteredCheck(Protocol):
    """What every entry of the checks registry has (a StateCheck, or a jobs TaskCheck)."""

    name: str
    version: str
    description: str


@runtime_checkable
class StateCheck(Protocol):
    """A named check of a run's final state (a directory and/or a database)."""

    name: str
    version: str
    description: str

    def __call__(self, root: Path | None, db_url: str | None) -> CheckResult:
        """Check the final state: a directory (``root``) and/or a database (``db_url``)."""
        ...


@runtime_checkable
class TranscriptReader(Protocol):
    """A transcript format from a plugin: recognise a file, read its transcripts.

    ``sniff`` gets up to 20 JSON objects from the file's head; ``read`` yields each
    transcript's info and steps (numbered by lhbench; indices given are ignored).
    """

    name: str
    harness: str

    def sniff(self, head: list[dict[str, Any]]) -> bool:
        """Whether the file's first JSON objects are this format."""
        ...

    def read(self, path: Path) -> Iterable[tuple[TranscriptInfo, Iterable[Step]]]:
        """Each transcript in the file: its info and its steps."""
        ...


@dataclass(frozen=True)
class PluginInfo:
    """One registered name, or one entry point that could not be used."""

    group: str
    name: str
    target: str
    distribution: str
    version: str
    builtin: bool
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON (``lhbench plugins list --json``)."""
        return {
            "group": self.group,
            "name": self.name,
            "target": self.target,
            "distribution": self.distribution,
            "version": self.version,
            "builtin": self.builtin,
            "error": self.error,
        }


def _dist(ep: EntryPoint) -> tuple[str, str]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "?", "?"
    return str(dist.metadata["Name"] or "?"), str(dist.version or "?")


class Registry(Mapping[str, T], Generic[T]):
    """Name -> object for one entry-point group: built-ins first, then plugins.

    Loaded on first use (a plugin importing lhbench while lhbench imports never sees a
    half-built module). ``adapt`` turns an entry point's object into registered objects
    (raising ``TypeError`` for a wrong kind); ``name_of`` gives each one's name.
    """

    def __init__(
        self,
        group: str,
        builtins: Callable[[], Iterable[T]],
        *,
        adapt: Callable[[Any], list[T]],
        name_of: Callable[[T], str] = lambda o: str(o.name),  # type: ignore[attr-defined]
    ) -> None:
        self.group = group
        self._builtins = builtins
        self._adapt = adapt
        self._name_of = name_of
        self._items: dict[str, T] | None = None
        self._infos: list[PluginInfo] = []
        self._lock = threading.Lock()

    def _load(self) -> dict[str, T]:
        if self._items is not None:
            return self._items
        with self._lock:
            if self._items is not None:
                return self._items
            items: dict[str, T] = {}
            infos: list[PluginInfo] = []
            eps = sorted(
                entry_points(group=self.group),
                key=lambda ep: (_dist(ep)[0] != _SELF, _dist(ep)[0], ep.name),
            )
            own = [ep for ep in eps if _dist(ep)[0] == _SELF]
            if not own:  # running from a source tree without install metadata
                for obj in self._builtins():
                    name = self._name_of(obj)
                    items[name] = obj
                    infos.append(PluginInfo(self.group, name, "(built in)", _SELF, "", True))
            for ep in eps:
                dist, version = _dist(ep)
                builtin = dist == _SELF
                try:
                    objs = self._adapt(ep.load())
                except Exception as exc:  # a broken plugin must not take lhbench down
                    infos.append(
                        PluginInfo(
                            self.group, ep.name, ep.value, dist, version, builtin,
                            error=f"{type(exc).__name__}: {exc}",
                        )
                    )  # fmt: skip
                    continue
                for obj in objs:
                    name = self._name_of(obj)
                    if name in items:
                        owner = next(i for i in infos if i.name == name and i.error is None)
                        infos.append(
                            PluginInfo(
                                self.group, name, ep.value, dist, version, builtin,
                                error=f"the name {name!r} is already registered by "
                                f"{owner.distribution} ({owner.target}); not loaded",
                            )
                        )  # fmt: skip
                        continue
                    items[name] = obj
                    infos.append(PluginInfo(self.group, name, ep.value, dist, version, builtin))
            self._infos = infos
            self._items = items
            return items

    def infos(self) -> list[PluginInfo]:
        """Every registered name and every entry point that could not be used."""
        self._load()
        return list(self._infos)

    def reload(self) -> None:
        """Forget what was loaded (after installing a plugin in this process)."""
        with self._lock:
            self._items = None
            self._infos = []

    def __getitem__(self, name: str) -> T:
        return self._load()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())


def adapter(kind: type, what: str) -> Callable[[Any], list[Any]]:
    """An ``adapt`` accepting one object of ``kind`` or a list/tuple of them."""

    def adapt(obj: Any) -> list[Any]:
        objs = list(obj) if isinstance(obj, list | tuple) else [obj]
        for o in objs:
            if not isinstance(o, kind):
                raise TypeError(f"expected {what}, got {type(o).__name__}")
        return objs

    return adapt


def _check_name(check: RegisteredCheck) -> str:
    name = getattr(check, "name", None)
    if not isinstance(name, str) or not name:
        raise TypeError("a check needs a non-empty str name")
    return name


def _as_checks(obj: Any) -> list[RegisteredCheck]:
    """A StateCheck, or a TaskCheck (``plan`` and ``run``), or a list of them."""
    objs = list(obj) if isinstance(obj, list | tuple) else [obj]
    for o in objs:
        task_check = callable(getattr(o, "plan", None)) and callable(getattr(o, "run", None))
        if not isinstance(o, RegisteredCheck) or not (isinstance(o, StateCheck) or task_check):
            raise TypeError(
                "expected a StateCheck (name, version, description, __call__) or a TaskCheck "
                f"(name, version, description, plan, run), got {type(o).__name__}"
            )
    return objs


#: lhbench's own entry point of the checks group (as ``pyproject.toml`` declares it)
BUILTIN_CHECKS_ENTRY = "lhbench.jobs.checks:BUILTIN_CHECKS"


def _builtin_checks() -> list[RegisteredCheck]:
    # only in a source tree without install metadata: load the entry point pyproject declares
    ep = EntryPoint("builtin", BUILTIN_CHECKS_ENTRY, GROUPS["checks"])
    return _as_checks(ep.load())


CHECKS: Registry[RegisteredCheck] = Registry(
    GROUPS["checks"], _builtin_checks, adapt=_as_checks, name_of=_check_name
)


def check_registry() -> Registry[RegisteredCheck]:
    """The checks: lhbench's (verify, hooks, figma, content) and the plugins'."""
    return CHECKS


def _run_check(argv: list[str] | None = None) -> int:
    """In the sandbox: run one registered state check, answer with verify's protocol."""
    ap = argparse.ArgumentParser(prog="python -m lhbench.plugins")
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("name")
    c.add_argument("--root", type=Path)
    c.add_argument("--db")
    args = ap.parse_args(argv)
    try:
        check = CHECKS[args.name]
    except KeyError:
        print(json.dumps({"error": f"no state check {args.name!r} is installed"}))
        return 2
    if not isinstance(check, StateCheck):
        print(json.dumps({"error": f"{args.name!r} is not a state check: the verify job runs it"}))
        return 2
    result = check(args.root, args.db)
    if not isinstance(result, CheckResult):
        print(json.dumps({"error": f"check {args.name!r} answered {type(result).__name__}"}))
        return 2
    print(json.dumps({"passed": bool(result.passed), "detail": str(result.detail)[:2000]}))
    return 0 if result.passed else 1


if __name__ == "__main__":
    # run as ``python -m``: use the module plugins import (not this __main__ copy), so
    # their CheckResult is the one checked against
    from lhbench.plugins import _run_check as run_check

    sys.exit(run_check())
