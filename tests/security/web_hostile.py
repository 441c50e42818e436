"""A store with a payload in every field a page shows, and every GET route of the app filled.

Each payload is numbered after the field it sits in: whatever script of it runs calls
``__pwn(N)`` or ``alert(N)``, so a hit names the field. A payload opens with ``javascript:``
(a link or frame source that starts with it would run on click) and then carries tags,
attribute breakers for double-, single- and unquoted attributes, a ``</script>`` breaker,
pre-escaped markup, template syntax (``{{'7'*7}}`` would print 7777777) and Unicode tricks.
Fields whose text is part of a URL path (run ids) carry the variant without slashes.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from lhbench.annotate import AnnotationTarget, annotation_target, save_version
from lhbench.schema import (
    Artifact,
    DimensionScore,
    Grade,
    GradeStatus,
    JudgeIdentity,
    JudgeKind,
    Label,
    PreferenceVote,
    Role,
    Run,
    RunStatus,
    Step,
    StepKind,
    TaskPack,
    TierKind,
    Trajectory,
    Usage,
    Verdict,
    grade_key,
    verdict_key,
)
from lhbench.store import Store
from lhbench.web import add_user
from lhbench.web.arena import Comparison, current_comparison

PASSWORD = "correct horse battery"
SECRET = "test-secret"
PACK = "lhbench-samples"
T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
# what the template payload prints if a template engine ever evaluates data
SSTI_OUTPUT = "7777777"


class Payloads:
    """Numbered payloads; ``names[n]`` is the field payload ``n`` was made for."""

    def __init__(self) -> None:
        self.names: dict[int, str] = {}

    def _new(self, name: str) -> int:
        n = len(self.names) + 1
        self.names[n] = name
        return n

    @staticmethod
    def mark(n: int) -> str:
        """Plain text unique to payload ``n`` (it survives escaping unchanged)."""
        return f"zq{n}z"

    def full(self, name: str, *, slash: bool = True) -> str:
        """Every trick in one string (``slash=False``: none with a ``/``, for URL paths)."""
        n = self._new(name)
        js = f"__pwn({n})"
        parts = [
            f"javascript:{js};{self.mark(n)}",
            f"<img src=x onerror={js}>",
            f'"><svg onload={js}>',
            f"'><svg onload={js}>",
            f'" autofocus onfocus="{js}" x="',
            f"' autofocus onfocus='{js}' x='",
            f" autofocus onfocus={js} x=",
            f"&lt;img src=x onerror={js}&gt;&#x3c;svg onload={js}&#x3e;",
            "{{'7'*7}}${'7'.repeat(7)}{%raw%}",
            f"\u202e\u2028\u2029\ufeff<scr\u200bipt>{js}<\u2215scr\u200bipt>"
            f"\uff1cscript\uff1e{js}\uff1c\uff0fscript\uff1e<\u0130MG src=x onerror={js}>",
            f"[md](javascript:alert({n}))",
        ]
        if slash:
            parts += [
                f"</script><script>{js}</script>",
                f"</title></textarea></style></noscript><img src=x onerror={js}>",
                f'<a href="javascript:alert({n})">a</a>',
                f'<iframe srcdoc="<script>parent.{js}</script>"></iframe>',
                f'<object data="javascript:alert({n})"></object>',
            ]
        return "".join(parts)

    def short(self, name: str) -> str:
        """Under 100 characters (user names)."""
        n = self._new(name)
        return f"{self.mark(n)}<img src=x onerror=__pwn({n})>\"'><svg onload=__pwn({n})>"


# agents ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Agent:
    """What identifies an agent: harness, its version, model and version tags."""

    harness: str
    harness_version: str
    model: str
    versions: dict[str, str]

    def identity(self) -> list[str]:
        """Strings that name this agent (any of them on a page identifies it)."""
        bare = self.model.split(":", 1)[-1]
        return [self.harness, self.harness_version, bare, *self.versions.values()]


CLAUDE = Agent("claude-code", "2.1.0-ccver", "anthropic:claude-opus-4-6", {"skill": "skillalpha"})
GEMINI = Agent("gemini-cli", "0.9.1-gmver", "google-gla:gemini-3.1-pro", {"skill": "skillbeta"})


def real_run_id(agent: Agent, task: str) -> str:
    # the shape lhbench gives run ids (harness/workspace.run_id_for): the harness comes first
    digest = hashlib.sha256(f"{agent.harness}{agent.model}{task}".encode()).hexdigest()[:12]
    return f"{agent.harness}-{task}-r0-{digest}"


@dataclass
class World:
    """What was seeded: ids to fill routes with, who signs in, what identifies the agents."""

    payloads: Payloads
    agents: list[Agent]
    evil: Agent
    run_ids: list[str]
    evil_run_ids: list[str]
    artifact_names: dict[str, list[str]]
    admin: str
    annotator: str
    token: str
    pair: tuple[str, str]
    target: AnnotationTarget
    source_ids: list[str]
    sidecar: dict[str, Any] = field(default_factory=dict)

    def identity_marks(self) -> dict[str, str]:
        """Text that identifies an agent, escape-invariant, with what it names.

        Run ids count: lhbench's name the harness (``claude-code-<task>-r0-<hash>``), and
        an id is the handle to everything said about a run.
        """
        out: dict[str, str] = {}
        for a in self.agents:
            for s in a.identity():
                out[s] = f"{a.harness}'s identity"
        for s in self.evil.identity():
            for m in _marks_in(s):
                out[m] = "the hostile agent's identity"
        for rid in self.run_ids + self.evil_run_ids:
            for m in list(_marks_in(rid)) or [rid]:
                out[m] = "a run id"
        return out


def _marks_in(text: str) -> Iterator[str]:
    import re

    yield from re.findall(r"zq\d+z", text)


# the pack ------------------------------------------------------------------------------------


def _hostile_pack(p: Payloads) -> TaskPack:
    from lhbench.packs import bundled_pack_dirs, load_pack

    pack = load_pack(next(d for d in bundled_pack_dirs() if d.name == PACK))
    tasks = []
    for i, t in enumerate(pack.tasks):
        update: dict[str, Any] = {"title": p.full(f"task[{i}].title")}
        if t.turns is not None:
            update["turns"] = [p.full(f"task[{i}].turns")]
        else:
            update["instruction"] = p.full(f"task[{i}].instruction")
        tasks.append(t.model_copy(update=update))
    rubrics = []
    for r in pack.rubrics:
        tiers = []
        for tier in r.tiers:
            dims = [
                d.model_copy(
                    update={
                        "name": p.full(f"rubric {r.id} dimension {d.id} name"),
                        "description": p.full(f"rubric {r.id} dimension {d.id} description"),
                        "anchors": {
                            k: p.full(f"rubric {r.id} dimension {d.id} anchor {k}")
                            for k in d.anchors
                        },
                    }
                )
                for d in tier.dimensions
            ]
            tiers.append(tier.model_copy(update={"dimensions": dims}))
        rubrics.append(
            r.model_copy(
                update={
                    "title": p.full(f"rubric {r.id} title"),
                    "version": p.full(f"rubric {r.id} version", slash=False),
                    "tiers": tiers,
                }
            )
        )
    return pack.model_copy(
        update={
            "tasks": tasks,
            "rubrics": rubrics,
            "description": p.full("pack description"),
            "content_hash": "b" * 64,
        }
    )


def _annotation_pack(dest: Path, p: Payloads) -> tuple[AnnotationTarget, str]:
    """content-mini copied, its task title and an added source (title and lines) hostile."""
    from lhbench.packs import bundled_pack_dirs

    src = next(d for d in bundled_pack_dirs() if d.name == "content-mini")
    shutil.copytree(src, dest)
    task_yaml = next((dest / "tasks").glob("*/task.yaml"))
    text = task_yaml.read_text()
    title = json.dumps(p.full("annotate task title"))
    task_yaml.write_text(
        "\n".join(f"title: {title}" if ln.startswith("title:") else ln for ln in text.splitlines())
        + "\n"
    )
    task_id = task_yaml.parent.name
    ctx = task_yaml.parent / "initial" / "context"
    index = json.loads((ctx / "sources.json").read_text())
    sid = "hostile-notes"
    line = p.full("annotate source line")
    lines = [f"# {p.full('annotate source heading')}", "", line, "Plain line."]
    body = "\n".join(lines) + "\n"
    (ctx / f"{sid}.md").write_text(body)
    index["sources"].append(
        {
            "extractor": {"name": "test", "normalizer_version": "1", "version": "0"},
            "id": sid,
            "lines": len(lines),
            "origin": f"{sid}.html",
            "sha256": hashlib.sha256(body.encode()).hexdigest(),
            "title": p.full("annotate source title"),
        }
    )
    index["sources"].sort(key=lambda s: s["id"])
    (ctx / "sources.json").write_text(json.dumps(index, indent=2) + "\n")
    return annotation_target(dest, task_id), line


# runs ----------------------------------------------------------------------------------------


def _trajectory(rid: str, p: Payloads, hostile: bool) -> Trajectory:
    def t(name: str) -> str:
        return p.full(name) if hostile else "plain text"

    steps = [
        Step(index=0, role=Role.USER, kind=StepKind.MESSAGE, content=t("step user message")),
        Step(
            index=1,
            role=Role.ASSISTANT,
            kind=StepKind.THINKING,
            content=t("step thinking"),
        ),
        Step(
            index=2,
            role=Role.ASSISTANT,
            kind=StepKind.TOOL_CALL,
            tool_name=t("step tool name"),
            tool_call_id="c1",
            content=t("step tool call text"),
            tool_input={"command": t("tool input command"), t("tool input key"): t("tool input")},
            agent_id=t("step agent id"),
        ),
        Step(
            index=3,
            role=Role.TOOL,
            kind=StepKind.TOOL_RESULT,
            tool_name=t("step tool result name"),
            tool_call_id="c1",
            tool_output=t("step tool output"),
            is_error=True,
            exit_code=2,
        ),
        Step(
            index=4,
            role=Role.SYSTEM,
            kind=StepKind.HOOK,
            tool_name=t("step hook name"),
            content=t("step hook output"),
        ),
        Step(index=5, role=Role.SYSTEM, kind=StepKind.COMPACTION, content=t("step compaction")),
        Step(index=6, role=Role.SYSTEM, kind=StepKind.ERROR, content=t("step error")),
        Step(
            index=7,
            role=Role.TOOL,
            kind=StepKind.TOOL_RESULT,
            tool_name=t("orphan tool result name"),
            tool_call_id="orphan",
            tool_output=t("orphan tool result"),
        ),
        Step(
            index=8,
            role=Role.ASSISTANT,
            kind=StepKind.MESSAGE,
            content=t("final answer") + "\n\n[details](javascript:alert(1)) <b>bold</b>",
        ),
    ]
    return Trajectory(run_id=rid, steps=steps)


def _artifact(rid: str, name: str, media_type: str, data: bytes, **kw: Any) -> Artifact:
    return Artifact(
        run_id=rid,
        name=name,
        media_type=media_type,
        sha256=hashlib.sha256(data).hexdigest(),
        size=len(data),
        content=data,
        **kw,
    )


PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cfc0f01f0005000201a3a1f1b10000000049454e44ae426082"
)


def _artifacts(rid: str, p: Payloads, hostile: bool) -> list[Artifact]:
    def t(name: str) -> str:
        return p.full(name) if hostile else "plain"

    md = f"# Report\n\n{t('markdown artifact')}\n\n<script>__pwn(0)</script>\n".encode()
    csv = f"region,total\n{t('csv header')},1\nnorth,{t('csv cell')}\n".encode()
    arts = [
        _artifact(rid, "report.md", "text/markdown", md),
        _artifact(
            rid,
            "page.html",
            "text/html",
            b"<h1>Totals</h1><script>top.__pwn(0);alert(0)</script>"
            b'<img src=x onerror="top.__pwn(0);alert(0)">',
        ),
        _artifact(
            rid,
            "evil.svg",
            "image/svg+xml",
            b'<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40" '
            b'onload="alert(0)"><script>top.__pwn(0);alert(0)</script>'
            b"<circle cx='20' cy='20' r='15'/></svg>",
        ),
        _artifact(rid, "shots/home.png", "image/png", PNG),
        _artifact(rid, "totals.csv", "text/csv", csv),
        _artifact(rid, "data.json", "application/json", json.dumps({t("json key"): 1}).encode()),
        _artifact(rid, "src/app.tsx", "text/plain", t("code artifact").encode()),
    ]
    if hostile:
        arts += [
            _artifact(rid, p.full("artifact name"), "text/plain", b"named"),
            _artifact(rid, "img-" + p.full("image artifact name"), "image/png", PNG),
            _artifact(
                rid,
                "notes.txt",
                "text/plain; " + p.full("artifact media type"),
                b"typed",
                status="truncated",
                note=p.full("artifact note"),
            ),
            Artifact(
                run_id=rid,
                name="big.bin",
                media_type="application/octet-stream",
                sha256="0" * 64,
                size=10,
                status="omitted",
                note=p.full("omitted artifact note"),
            ),
        ]
    return arts


def _judge(p: Payloads, hostile: bool, i: int) -> JudgeIdentity:
    if not hostile:
        return JudgeIdentity(kind=JudgeKind.LLM, model=f"openai:judge-{i}", family="openai")
    return JudgeIdentity(
        kind=JudgeKind.LLM,
        model=p.full(f"judge {i} model"),
        family=p.full(f"judge {i} family"),
        endpoint=p.full(f"judge {i} endpoint"),
        prompt_version=p.full(f"judge {i} prompt version"),
        settings={p.full(f"judge {i} setting key"): p.full(f"judge {i} setting")},
    )


def seed(store: Store, tmp: Path) -> World:
    """Write the hostile store; the annotation pack goes under ``tmp/packs``."""
    p = Payloads()
    evil = Agent(
        harness=p.full("run.harness"),
        harness_version=p.full("run.harness_version"),
        model=p.full("run.model"),
        versions={p.full("run.versions key"): p.full("run.versions value")},
    )
    agents = [CLAUDE, GEMINI]
    pack = _hostile_pack(p)
    store.save_pack(pack)
    process = next(r for r in pack.rubrics if any(t.kind == TierKind.PROCESS for t in r.tiers))
    tier = next(t for t in process.tiers if t.kind == TierKind.PROCESS)
    judges = [_judge(p, False, 1), _judge(p, False, 2), _judge(p, True, 3)]
    run_ids: list[str] = []
    evil_ids: list[str] = []
    names: dict[str, list[str]] = {}
    grades: list[Grade] = []
    labels: list[Label] = []
    verdicts: list[Verdict] = []
    hostile_run = p.full("run.id", slash=False)
    for g, agent in enumerate([*agents, evil]):
        is_evil = agent is evil
        for k, task in enumerate(pack.tasks):
            rid = f"{hostile_run}-{task.id}" if is_evil else real_run_id(agent, task.id)
            run = Run(
                id=rid,
                pack_id=PACK,
                pack_hash=pack.content_hash,
                task_id=task.id,
                harness=agent.harness,
                harness_version=agent.harness_version,
                model=agent.model,
                versions=agent.versions,
                status=RunStatus.COMPLETED,
                started_at=T0 + timedelta(minutes=10 * (3 * k + g)),
                ended_at=T0 + timedelta(minutes=10 * (3 * k + g) + 7),
                usage=Usage(input_tokens=12000 + 1000 * g, output_tokens=3400),
                cost_usd=0.12 + 0.05 * g,
                source=p.full("run.source") if is_evil else None,
                metadata={"note": p.full("run.metadata")} if is_evil else {},
            )
            store.save_run(run)
            (evil_ids if is_evil else run_ids).append(rid)
            store.save_trajectory(_trajectory(rid, p, is_evil))
            arts = _artifacts(rid, p, is_evil)
            for a in arts:
                store.save_artifact(a)
            names[rid] = [a.name for a in arts if a.content is not None]
            for j, ident in enumerate(judges):
                scores = [1 + (g + k + j) % 5 for _ in tier.dimensions]
                grades.append(
                    Grade(
                        id=f"g-{g}-{k}-{j}",
                        run_id=rid,
                        rubric_id=process.id,
                        rubric_version=process.version,
                        rubric_hash=process.content_hash,
                        tier=TierKind.PROCESS,
                        judge=ident,
                        scores=[
                            DimensionScore(
                                dimension_id=d.id,
                                scale=d.scale,
                                score=None if (is_evil and i == 0) else s,
                                matched_level=p.full("grade matched level") if is_evil else None,
                                evidence=p.full("grade evidence") if is_evil else "saw it",
                                unscorable_reason=(
                                    p.full("grade unscorable reason")
                                    if is_evil and i == 0
                                    else None
                                ),
                            )
                            for i, (d, s) in enumerate(zip(tier.dimensions, scores, strict=True))
                        ],
                        tier_score=sum(
                            d.weight * s for d, s in zip(tier.dimensions, scores, strict=True)
                        ),
                        key=grade_key(rid, ident.key, process.content_hash, "process", 0),
                        cost_usd=0.002,
                        created_at=T0 + timedelta(hours=1, seconds=j),
                    )
                )
            if is_evil:
                grades.append(
                    Grade(
                        id=f"g-{g}-{k}-parse",
                        run_id=rid,
                        rubric_id=process.id,
                        rubric_version=process.version,
                        rubric_hash=process.content_hash,
                        tier=TierKind.PROCESS,
                        judge=JudgeIdentity(kind=JudgeKind.LLM, model="openai:judge-parse"),
                        status=GradeStatus.PARSE_ERROR,
                        raw_output=p.full("grade raw output"),
                        error=p.full("grade error"),
                        key=grade_key(rid, "parse", process.content_hash, "process", 0),
                        created_at=T0 + timedelta(hours=1),
                    )
                )
            labels.append(
                Label(
                    run_id=rid,
                    passed=(g + k) % 2 == 0,
                    source=p.full("label source") if is_evil else f"verify:{task.id}/verify.py",
                    detail=p.full("label detail") if is_evil else "totals match",
                    error=p.full("label error") if is_evil else None,
                )
            )
            ident = JudgeIdentity(
                kind=JudgeKind.AGENT,
                model=p.full("verdict judge model") if is_evil else "openai:aj-judge",
            )
            verdicts.append(
                Verdict(
                    id=f"v-{g}-{k}",
                    run_id=rid,
                    judge=ident,
                    verdict="PASS" if k % 2 else "FAIL",
                    evidence=[p.full("verdict evidence") if is_evil else "report lists regions"],
                    tools_used=[p.full("verdict tool") if is_evil else "read_file"],
                    failure_mode=p.full("verdict failure mode") if is_evil else None,
                    error=p.full("verdict error") if is_evil else None,
                    raw_output=p.full("verdict raw output") if is_evil else None,
                    tool_calls=3,
                    key=verdict_key(rid, ident.key, "state", 0),
                )
            )
    store.save_grades(grades)
    store.save_labels(labels)
    store.save_verdicts(verdicts)
    # a run of a pack the store does not hold (imported with hostile pack and task ids)
    for agent in (CLAUDE, evil):
        rid = f"{hostile_run}-orphan" if agent is evil else real_run_id(agent, "orphan")
        store.save_run(
            Run(
                id=rid,
                pack_id=p.full("run.pack_id"),
                task_id=p.full("run.task_id"),
                harness=agent.harness,
                model=agent.model,
                versions=agent.versions,
                status=RunStatus.COMPLETED,
            )
        )
        (evil_ids if agent is evil else run_ids).append(rid)
        names[rid] = []
    failed = real_run_id(GEMINI, "failed")
    store.save_run(
        Run(
            id=failed,
            pack_id=PACK,
            task_id=pack.tasks[0].id,
            harness=GEMINI.harness,
            model=GEMINI.model,
            versions=GEMINI.versions,
            status=RunStatus.FAILED,
            error=p.full("run.error"),
        )
    )
    run_ids.append(failed)
    names[failed] = []
    # accounts: the names are payloads too (every page shows who is signed in)
    admin = p.short("admin user name")
    annotator = p.short("annotator user name")
    voter = p.short("earlier annotator name")
    for name, is_admin in ((admin, True), (annotator, False), (voter, False)):
        add_user(store, name, PASSWORD, admin=is_admin)
    for k, task in enumerate(pack.tasks):
        store.save_vote(
            PreferenceVote(
                id=f"seed-vote-{k}",
                pack_id=PACK,
                task_id=task.id,
                run_a=real_run_id(CLAUDE, task.id),
                run_b=f"{hostile_run}-{task.id}",
                left="a" if k % 2 else "b",
                winner="a" if k < 2 else "b",
                quality=4,
                annotator=voter,
            )
        )
    store.save_vote(
        PreferenceVote(
            id="judge-vote",
            pack_id=PACK,
            task_id=pack.tasks[0].id,
            run_a=real_run_id(CLAUDE, pack.tasks[0].id),
            run_b=real_run_id(GEMINI, pack.tasks[0].id),
            left="a",
            winner=None,
            annotator=p.full("pairwise judge name"),
            rater_kind=JudgeKind.LLM,
            status="error",
            error=p.full("pairwise vote error"),
        )
    )
    # the annotator's open arena pair (as POST /arena/next records one): the hostile
    # agent's run on the left, gemini-cli's on the right, of the first task
    task0 = pack.tasks[0].id
    left, right = f"{hostile_run}-{task0}", real_run_id(GEMINI, task0)
    token = "pair-token-0123456789abcdef"
    store.add_comparison(
        token=token,
        annotator=annotator,
        pack_id=PACK,
        task_id=task0,
        run_a=right,
        run_b=left,
        left="b",
    )
    assert current_comparison(store, annotator) == Comparison(token, PACK, task0, left, right)
    # annotations with hostile text, on a pack whose task title and a source are hostile
    target, line = _annotation_pack(tmp / "packs" / "annot", p)
    sources = target.sources()
    sid = "hostile-notes"
    assert sid in sources
    save_version(
        store,
        target,
        {
            "course": p.short("annotation course title"),
            "global_notes": p.full("annotation global notes"),
            "chapters": [
                {
                    "id": "ch1",
                    "title": p.full("annotation chapter title")[:300],
                    "instruction": p.full("annotation chapter instruction"),
                    "design_notes": p.full("annotation design notes"),
                    "criteria": [p.full("annotation criterion")],
                    "spans": [{"source_id": sid, "start_line": 3, "end_line": 3, "quote": line}],
                }
            ],
        },
        author=admin,
        parent=None,
        sources=sources,
    )
    return World(
        payloads=p,
        agents=agents,
        evil=evil,
        run_ids=run_ids,
        evil_run_ids=evil_ids,
        artifact_names=names,
        admin=admin,
        annotator=annotator,
        token=token,
        pair=(left, right),
        target=target,
        source_ids=list(sources.ids),
    )
