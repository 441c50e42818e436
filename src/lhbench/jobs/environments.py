"""Environments: one registered object per domain, and the one Agent-as-a-Judge pipeline.

An :class:`Environment` says, for the packs it claims, how a run's final state is made
(kept workspace, replayed files or database, a search item, an office document), which
checks its tasks run (names in the checks registry, :mod:`lhbench.jobs.checks`), which
fixture trajectories the pack ships as runs, which runs it judges, which options its
judge takes, and which judge (with which tools and guide) gives the verdicts. Every job
that needs a final state asks the pack's environment: :func:`judge_states` (``lhbench
aj run`` and ``lhbench.judge_states``) and verification (``lhbench verify``) alike, so
the CLI and the API cannot disagree on what a pack holds.

The built-ins are registered in the ``lhbench.environments`` entry-point group, as a
plugin's are::

    [project.entry-points."lhbench.environments"]
    acme-spreadsheets = "acme_lhbench:SPREADSHEETS"   # an Environment

A plugin's environment is asked first, so it can claim packs more narrowly than a
built-in; it can never replace a built-in's name.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from lhbench.errors import ConfigError
from lhbench.jobs.fixtures import FixtureJob
from lhbench.jobs.packs import LoadedPack
from lhbench.jobs.states import StateProvider
from lhbench.plugins import GROUPS, Registry, adapter
from lhbench.schema import EnvironmentKind, Run, RunStatus

if TYPE_CHECKING:
    from lhbench.config import Settings
    from lhbench.envs import PostgresDatabases
    from lhbench.models import ModelSpec
    from lhbench.sandbox import Sandbox
    from lhbench.store import Store

__all__ = [
    "BUILTIN_ENVIRONMENTS",
    "ENVIRONMENTS",
    "EnvContext",
    "Environment",
    "ReplayEnvironment",
    "check_options",
    "environment_context",
    "environment_for",
    "environment_registry",
    "judged_runs",
]


@dataclass
class EnvContext:
    """What one job gives an environment: settings, sandbox, options, where states go.

    ``judge`` is ``agent``, ``llm`` or None (label only); ``options`` the environment's own
    (validated against :attr:`Environment.options`). Resources an environment opens (a
    PostgreSQL server's databases) are closed by ``cleanup`` when the job ends.
    """

    settings: Settings
    sandbox: Sandbox
    workdir: Path
    judge: str | None = None
    budget: int = 20
    options: dict[str, str] = field(default_factory=dict)
    cleanup: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)


@runtime_checkable
class Environment(Protocol):
    """A domain lhbench can replay, check and judge in (the protocol every one keeps)."""

    name: str
    description: str
    #: option -> allowed values (empty: any text); an option not listed is refused
    options: Mapping[str, tuple[str, ...]]
    #: the checks its tasks run (names in the checks registry; a task may name more)
    checks: tuple[str, ...]

    def claims(self, pack: LoadedPack) -> bool:
        """Whether this environment handles the pack."""
        ...

    def fixtures(self, store: Store, pack: LoadedPack) -> FixtureJob:
        """The job storing the pack's shipped trajectories as runs."""
        ...

    def judged(self, run: Run) -> bool:
        """Whether a stored run of the pack is one this environment labels and judges."""
        ...

    def states(self, store: Store, pack: LoadedPack, ctx: EnvContext) -> StateProvider:
        """The final states the checks read."""
        ...

    def judge_states(self, store: Store, pack: LoadedPack, ctx: EnvContext) -> StateProvider:
        """The final states the judge inspects (often the checks' own)."""
        ...

    async def verdict_judge(
        self,
        client: Any,
        spec: ModelSpec,
        ctx: EnvContext,
        states: StateProvider,
        runs: Sequence[Run],
    ) -> Any:
        """The judge (a :class:`~lhbench.judges.Judge`) that gives this domain's verdicts."""
        ...


class ReplayEnvironment:
    """Files and databases: a run's workspace, or its file/SQL calls replayed on a copy.

    The base of the built-ins: each overrides what its domain does differently.
    """

    name: str = "filesystem"
    description: str = (
        "files: the run's workspace, or its file calls replayed on the task's initial state"
    )
    kinds: tuple[EnvironmentKind, ...] = (
        EnvironmentKind.FILESYSTEM,
        EnvironmentKind.NONE,
        EnvironmentKind.WEB,
    )
    options: Mapping[str, tuple[str, ...]] = {}
    checks: tuple[str, ...] = ("verify", "hooks")
    state_dir: str = "files"

    def claims(self, pack: LoadedPack) -> bool:
        """Packs of this environment's kinds."""
        return pack.pack.environment in self.kinds

    def fixtures(self, store: Store, pack: LoadedPack) -> FixtureJob:
        """``tasks/<id>/trajectories/*.jsonl``, each a run."""
        return FixtureJob(store, pack)

    def judged(self, run: Run) -> bool:
        """Every run of the pack."""
        return True

    def postgres(self, ctx: EnvContext) -> PostgresDatabases | None:
        """No database server: files only."""
        return None

    def states(self, store: Store, pack: LoadedPack, ctx: EnvContext) -> StateProvider:
        """Kept workspaces, or replays (files; databases in SQLite or PostgreSQL)."""
        pg = self.postgres(ctx)
        where = "postgres" if pg is not None else self.state_dir
        return StateProvider(store, pack, ctx.workdir / where, postgres=pg, sandbox=ctx.sandbox)

    def judge_states(self, store: Store, pack: LoadedPack, ctx: EnvContext) -> StateProvider:
        """The checks' states."""
        return self.states(store, pack, ctx)

    async def verdict_judge(
        self,
        client: Any,
        spec: ModelSpec,
        ctx: EnvContext,
        states: StateProvider,
        runs: Sequence[Run],
    ) -> Any:
        """The verdict judge with the state tools (files, SQL, the trajectory)."""
        from lhbench.judges import VerdictJudge

        return VerdictJudge(
            client, spec, agentic=ctx.judge == "agent", tool_budget=ctx.budget, sandbox=ctx.sandbox
        )


class SqlEnvironment(ReplayEnvironment):
    """Databases: the run's SQLite file, or its SQL replayed in SQLite or PostgreSQL."""

    name: str = "sql"
    description: str = (
        "databases: the run's database, or its SQL replayed on the task's dump "
        "(SQLite, or PostgreSQL with postgres_url)"
    )
    kinds: tuple[EnvironmentKind, ...] = (EnvironmentKind.SQL, EnvironmentKind.MIXED)
    options: Mapping[str, tuple[str, ...]] = {"postgres_url": ()}
    state_dir: str = "sqlite"

    def postgres(self, ctx: EnvContext) -> PostgresDatabases | None:
        """The PostgreSQL server replays go to (``postgres_url`` or ``aj_postgres_url``)."""
        from lhbench.envs import PostgresDatabases

        url = ctx.options.get("postgres_url") or ctx.settings.aj_postgres_url
        if not url:
            return None
        pg = PostgresDatabases(url)
        ctx.cleanup.callback(pg.drop_all)
        return pg


class FigmaEnvironment(ReplayEnvironment):
    """Figma-to-code: the agent's app in its workspace, checked against the design."""

    name: str = "figma-to-code"
    description: str = (
        "an app built from a Figma design: the run's workspace, built, served and captured"
    )
    kinds: tuple[EnvironmentKind, ...] = (EnvironmentKind.FIGMA_TO_CODE,)
    checks: tuple[str, ...] = ("verify", "hooks", "figma")


class ContentEnvironment(ReplayEnvironment):
    """Programmatic content: a course (scenes, slides, citations) in the run's workspace."""

    name: str = "programmatic-content"
    description: str = (
        "a course the agent produced: the run's workspace, its scenes, slides and citations"
    )
    kinds: tuple[EnvironmentKind, ...] = (EnvironmentKind.PROGRAMMATIC_CONTENT,)
    checks: tuple[str, ...] = ("verify", "hooks", "content")


class SearchEnvironment(ReplayEnvironment):
    """Search: answers split into items, each a run judged with the recorded web."""

    name: str = "search"
    description: str = (
        "deep-research answers split into items, judged against a recorded web corpus"
    )
    kinds: tuple[EnvironmentKind, ...] = (EnvironmentKind.WEB,)
    options: Mapping[str, tuple[str, ...]] = {"tool_set": ("state", "state+trajectory")}

    def claims(self, pack: LoadedPack) -> bool:
        """Web packs with a recorded corpus (``corpus/``)."""
        from lhbench.jobs.aj_search import is_search_pack

        return is_search_pack(pack)

    def fixtures(self, store: Store, pack: LoadedPack) -> FixtureJob:
        """Every item of every answer, each a run."""
        from lhbench.jobs.aj_search import SearchFixtureJob

        return SearchFixtureJob(store, pack)

    def judged(self, run: Run) -> bool:
        """The item runs (a search answer is judged item by item)."""
        return "item" in run.metadata

    def states(self, store: Store, pack: LoadedPack, ctx: EnvContext) -> StateProvider:
        """The item and its answer, beside the corpus index."""
        from lhbench.jobs.aj_search import SearchStates

        return SearchStates(store, pack, ctx.workdir / "web", sandbox=ctx.sandbox)

    async def verdict_judge(
        self,
        client: Any,
        spec: ModelSpec,
        ctx: EnvContext,
        states: StateProvider,
        runs: Sequence[Run],
    ) -> Any:
        """The item judge with the recorded web (and the trajectory, by tool set)."""
        from lhbench.jobs.aj_search import SearchStates
        from lhbench.judges.search_item import SearchItemJudge

        assert isinstance(states, SearchStates)
        index = await asyncio.to_thread(states.index)
        return SearchItemJudge(
            client,
            spec,
            index=index,
            items={r.id: states.under_review(r) for r in runs},
            agentic=ctx.judge == "agent",
            tool_budget=ctx.budget,
            sandbox=ctx.sandbox,
            tool_set=ctx.options.get("tool_set", "state+trajectory"),
        )


class GuiEnvironment(ReplayEnvironment):
    """Office (GUI): OSWorld-shaped trajectories and their final documents."""

    name: str = "gui"
    description: str = (
        "office tasks: the final document, screenshots and accessibility trees, "
        "the document rendered by LibreOffice in the sandbox"
    )
    kinds: tuple[EnvironmentKind, ...] = (EnvironmentKind.GUI,)
    options: Mapping[str, tuple[str, ...]] = {"modality": ("screenshot", "a11y", "both")}

    def claims(self, pack: LoadedPack) -> bool:
        """GUI packs on disk."""
        from lhbench.jobs.aj_gui import is_gui_pack

        return is_gui_pack(pack)

    def fixtures(self, store: Store, pack: LoadedPack) -> FixtureJob:
        """Every OSWorld result directory, each a run."""
        from lhbench.jobs.aj_gui import GuiFixtureJob

        return GuiFixtureJob(store, pack)

    def judged(self, run: Run) -> bool:
        """The runs read from OSWorld result directories."""
        return "gui" in run.metadata

    def states(self, store: Store, pack: LoadedPack, ctx: EnvContext) -> StateProvider:
        """The final document and what was recorded, not rendered (the checks need no pages)."""
        from lhbench.jobs.aj_gui import GuiStates

        return GuiStates(store, pack, ctx.workdir / "gui", sandbox=ctx.sandbox, render=False)

    def judge_states(self, store: Store, pack: LoadedPack, ctx: EnvContext) -> StateProvider:
        """Rendered pages only for an agent judge that sees images (LibreOffice is slow)."""
        from lhbench.jobs.aj_gui import GuiStates

        sees_images = ctx.judge == "agent" and ctx.options.get("modality", "both") != "a11y"
        if not sees_images:
            return self.states(store, pack, ctx)
        return GuiStates(store, pack, ctx.workdir / "gui-rendered", sandbox=ctx.sandbox)

    async def verdict_judge(
        self,
        client: Any,
        spec: ModelSpec,
        ctx: EnvContext,
        states: StateProvider,
        runs: Sequence[Run],
    ) -> Any:
        """The GUI judge with one modality's tools."""
        from lhbench.judges.gui_judge import GuiJudge

        return GuiJudge(
            client,
            spec,
            agentic=ctx.judge == "agent",
            tool_budget=ctx.budget,
            sandbox=ctx.sandbox,
            modality=ctx.options.get("modality", "both"),
        )


#: the built-ins, most specific first (a web pack with a corpus is a search pack)
BUILTIN_ENVIRONMENTS: list[Environment] = [
    SearchEnvironment(),
    GuiEnvironment(),
    SqlEnvironment(),
    FigmaEnvironment(),
    ContentEnvironment(),
    ReplayEnvironment(),
]


def _builtins() -> list[Environment]:
    return list(BUILTIN_ENVIRONMENTS)


ENVIRONMENTS: Registry[Environment] = Registry(
    GROUPS["environments"],
    _builtins,
    adapt=adapter(Environment, "an Environment (name, options, checks, claims, states, …)"),
)


def environment_registry() -> Registry[Environment]:
    """The environments: built-in and from plugins."""
    return ENVIRONMENTS


def environment_for(pack: LoadedPack) -> Environment:
    """The environment that handles the pack: a plugin's first, then the built-ins'.

    Raises:
        ConfigError: no environment claims the pack.
    """
    envs = [ENVIRONMENTS[n] for n in ENVIRONMENTS]
    builtin = {e.name for e in BUILTIN_ENVIRONMENTS}
    ordered = [e for e in envs if e.name not in builtin] + [
        e for e in BUILTIN_ENVIRONMENTS if e.name in {x.name for x in envs}
    ]
    for env in ordered:
        if env.claims(pack):
            return env
    raise ConfigError(
        f"pack {pack.pack.id!r} (environment {pack.pack.environment.value}): no environment "
        f"handles it (installed: {', '.join(e.name for e in ordered)})"
    )


def check_options(env: Environment, options: Mapping[str, str | None]) -> dict[str, str]:
    """The options given (None: not given), checked against what the environment takes.

    Raises:
        ConfigError: an option the environment does not take, or a value it does not allow.
    """
    out: dict[str, str] = {}
    for name, value in options.items():
        if value is None:
            continue
        flag = "--" + name.replace("_", "-")
        if name not in env.options:
            takers = [e.name for e in (ENVIRONMENTS[n] for n in ENVIRONMENTS) if name in e.options]
            raise ConfigError(
                f"{flag}: the {env.name} environment does not take it"
                + (f" (only {', '.join(takers)} packs do)" if takers else "")
            )
        allowed = env.options[name]
        if allowed and value not in allowed:
            raise ConfigError(f"{flag} {value!r}: expected one of {', '.join(allowed)}")
        out[name] = value
    return out


@contextlib.contextmanager
def environment_context(
    env: Environment,
    pack: LoadedPack,
    settings: Settings,
    sandbox: Sandbox,
    *,
    judge: str | None = None,
    budget: int = 20,
    options: Mapping[str, str | None] | None = None,
) -> Iterator[EnvContext]:
    """An :class:`EnvContext` for one job on one pack; what it opened is closed after."""
    ctx = EnvContext(
        settings,
        sandbox,
        settings.home / "states" / pack.pack.id,
        judge=judge,
        budget=budget,
        options=check_options(env, options or {}),
    )
    with ctx.cleanup:
        yield ctx


def judged_runs(store: Store, env: Environment, pack: LoadedPack) -> list[Run]:
    """The pack's stored runs that have ended and that the environment judges.

    A run that failed for infrastructure is no score: neither labelled nor judged.
    """
    return [
        r
        for r in store.list_runs(pack_id=pack.pack.id)
        if r.status not in (RunStatus.RUNNING, RunStatus.PENDING)
        and not r.infrastructure_failure
        and env.judged(r)
    ]
