"""The search domain end to end: items labelled by their checks, judged with the recorded web."""

from __future__ import annotations

import asyncio
import json
import math
import re
import shutil
from pathlib import Path

import pytest

from lhbench.config import Settings
from lhbench.envs.web import NOT_RECORDED
from lhbench.jobs import VerifyJob, resolve_pack, run_job
from lhbench.jobs.aj_search import SearchFixtureJob, SearchStates, answer_scores
from lhbench.packs import resolve_pack_dir
from lhbench.schema import JudgeKind
from lhbench.stats import binary_metrics
from lhbench.store import Store
from lhbench.testing import ModelStub, StubReply, StubRequest
from tests.cli.helpers import cli

ITEM = re.compile(r'<item untrusted="true">\n(.*?)\n</item>', re.S)


def intent(run_id: str) -> bool:
    """What the item's author meant: its id says ``pass-*`` or ``fail-*``."""
    return run_id.rsplit("--", 1)[1].split("-")[1] == "pass"


def test_every_item_label_reproduces_its_intent(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store:
        loaded = resolve_pack("aj-search-mini", Settings(home=tmp_path / "home"), store)

        async def go() -> None:
            await run_job(SearchFixtureJob(store, loaded))
            runs = store.list_runs(pack_id="aj-search-mini")
            states = SearchStates(store, loaded, tmp_path / "states")
            summary = await run_job(VerifyJob(store, runs, states), concurrency=2)
            assert summary.failed == 0

        asyncio.run(go())
        labels = {lab.run_id: lab for lab in store.list_labels()}
    assert len(labels) == 60
    wrong = {k: v.detail for k, v in labels.items() if v.passed != intent(k)}
    assert not wrong
    assert sum(lab.passed for lab in labels.values()) == 36


def web_judge_script(req: StubRequest) -> StubReply:
    """A judge that looks the item's value up on the cited page, then decides from that."""
    m = ITEM.search(req.text())
    assert m is not None, "the prompt must show the item under review"
    item = m.group(1)
    url = re.search(r"\(source: (\S+)\)", item).group(1)
    value = re.search(r"\u2014 ([0-9,]+)", item).group(1)
    if "find_in_page" in req.tool_names and not req.tool_results():
        return StubReply.call("find_in_page", {"url": url, "text": value})
    if req.tool_results():
        seen = req.tool_results()[-1]
        ok = NOT_RECORDED not in seen and "(no line" not in seen
    else:
        ok = True  # without tools: believe the answer
    answer = {"verdict": "PASS" if ok else "FAIL", "evidence": [item[:80]], "confidence": 0.7}
    return StubReply.call("final_result", answer)


@pytest.fixture
def one_task_pack(tmp_path: Path) -> Path:
    src = resolve_pack_dir("aj-search-mini")
    pack = tmp_path / "pack"
    pack.mkdir()
    shutil.copy(src / "pack.yaml", pack / "pack.yaml")
    shutil.copytree(src / "corpus", pack / "corpus")
    shutil.copytree(src / "tasks" / "velm-lighthouses", pack / "tasks" / "velm-lighthouses")
    return pack


def test_aj_run_search_pack_with_agent_and_llm_judges(one_task_pack: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    with ModelStub(web_judge_script) as stub:
        model = f"openai:judge@{stub.base_url}"
        for kind in ("agent", "llm"):
            res = cli(
                "aj", "run", str(one_task_pack), "--judge", kind, "--model", model,
                "--concurrency", "2", "--db", url, cwd=tmp_path,
            )  # fmt: skip
            assert res.exit_code == 0, res.stderr[-2000:]
            assert "15 run(s); 15 labelled" in res.stdout
        # agent: a lookup and an answer per item; llm: one request per item
        assert stub.count == 2 * 15 + 15
    with Store.open(url) as store:
        labels = {lab.run_id: bool(lab.passed) for lab in store.list_labels()}
        verdicts = store.list_verdicts()
        runs = store.list_runs()
    agent = {v.run_id: v for v in verdicts if v.judge.kind == JudgeKind.AGENT}
    llm = {v.run_id: v for v in verdicts if v.judge.kind == JudgeKind.LLM}
    assert len(agent) == len(llm) == 15
    assert all(v.tools_used == ["find_in_page"] for v in agent.values())
    assert all(v.tool_calls == 0 for v in llm.values())
    # the agent is fooled only where a contradicting page states the wrong value it cites
    for rid, v in agent.items():
        fooled = "fail-contradicted" in rid
        assert (v.verdict == "PASS") == (labels[rid] or fooled), rid
    ids = sorted(labels)
    tp = sum(1 for r in ids if labels[r])
    fp = sum(1 for r in ids if "fail-contradicted" in r)
    neg = sum(1 for r in ids if not labels[r])
    hand_agent = 2 * tp / (2 * tp + fp)
    hand_llm = 2 * tp / (2 * tp + neg)  # everything PASS
    scored = json.loads(cli("aj", "score", "--json", "--db", url, cwd=tmp_path).stdout)
    # AJ-Bench's figure is per answer: an answer passes when every item passes
    answers = sorted({r.rsplit("--", 1)[0] for r in ids})

    def per_answer(said: dict[str, bool]) -> list[bool]:
        return [all(said[r] for r in ids if r.startswith(f"{a}--")) for a in answers]

    truth = per_answer(labels)
    for mark, judge in (("✓", agent), ("✗", llm)):
        hand = binary_metrics(truth, per_answer({r: judge[r].verdict == "PASS" for r in ids}))
        table = scored["tables"][0]
        row = {r[1]: r for r in table["rows"]}[mark]
        got_f1 = row[table["columns"].index("overall")]
        assert (got_f1 is None) if math.isnan(hand.f1) else got_f1 == pytest.approx(100 * hand.f1)
        assert row[table["columns"].index("n")] == len(answers)
    # the item-level F1 is kept, labelled as such
    items = next(t for t in scored["tables"] if t["slug"] == "aj_search_items")
    assert "item level" in items["title"]
    rows = {r[1]: r for r in items["rows"]}
    sub = items["columns"][3]
    assert rows["✓"][items["columns"].index(sub)] == pytest.approx(100 * hand_agent)
    assert rows["✗"][items["columns"].index(sub)] == pytest.approx(100 * hand_llm)
    got = binary_metrics([labels[r] for r in ids], [agent[r].verdict for r in ids])
    assert got.f1 == pytest.approx(hand_agent)
    # per answer: the share of its items judged PASS
    scores = answer_scores(runs, list(agent.values()))
    assert len(scores) == 3
    for key, share in scores.items():
        task, aid = key.split("/")
        mine = [r for r in ids if r.startswith(f"aj-search-mini--{task}--{aid}--")]
        assert share == pytest.approx(sum(agent[r].verdict == "PASS" for r in mine) / len(mine))


@pytest.mark.parametrize(
    ("breakage", "named"),
    [
        ("answers/a1.json", "a1.json"),
        ("corpus", "pages.jsonl:3"),
    ],
)
def test_broken_search_pack_is_a_user_error(
    one_task_pack: Path, tmp_path: Path, breakage: str, named: str
) -> None:
    task = one_task_pack / "tasks" / "velm-lighthouses"
    if breakage == "corpus":
        lines = (one_task_pack / "corpus" / "pages.jsonl").read_text().splitlines()
        lines[2] = json.dumps({"url": "https://x.example/", "file": "../../../../etc/passwd",
                               "captured_at": "2026-01-01T00:00:00+00:00"})  # fmt: skip
        (one_task_pack / "corpus" / "pages.jsonl").write_text("\n".join(lines) + "\n")
    else:
        (task / breakage).write_text('{"answer": "x", "items": [{"id": "BAD ID", "text": "x"}]}')
    with ModelStub(web_judge_script) as stub:
        res = cli(
            "aj", "run", str(one_task_pack), "--judge", "agent",
            "--model", f"openai:judge@{stub.base_url}",
            "--db", f"sqlite:///{tmp_path / 's.db'}", cwd=tmp_path,
        )  # fmt: skip
        assert res.exit_code == 2, res.stdout[-1000:]
        assert named in res.stderr
        assert "root:" not in res.stdout + res.stderr
        if breakage == "corpus":
            assert stub.count == 0  # nothing judged on a corpus that does not load


def test_tool_sets_of_the_search_judge(tmp_path: Path) -> None:
    from lhbench.judges import StateRef, VerdictItem
    from lhbench.judges.search_item import SearchItemJudge
    from lhbench.models import resolve_model
    from lhbench.schema import Run, Trajectory

    spec = resolve_model("openai:judge@http://127.0.0.1:9/v1", {})
    traj = tmp_path / "trajectory.json"
    traj.write_text(Trajectory(run_id="r").model_dump_json())
    run = Run(id="r", pack_id="p", task_id="t", harness="fixture", model="m")
    item = VerdictItem(run, None, Trajectory(run_id="r"), StateRef("s", tmp_path, None, traj))
    keys = set()
    for tool_set, with_traj in (("state", False), ("state+trajectory", True)):
        judge = SearchItemJudge(
            object(),  # type: ignore[arg-type]  # no model is asked here
            spec, index=tmp_path / "i.sqlite", items={}, agentic=True, tool_set=tool_set,
        )  # fmt: skip
        [prepared] = judge._tool_commands(item)
        assert ("--trajectory" in prepared.argv) == with_traj
        assert judge.identity.settings["tool_set"] == tool_set
        keys.add(judge.identity.key)
        prepared.close()
    assert len(keys) == 2  # a different tool set is a different judge
    with pytest.raises(ValueError, match="tool set"):
        SearchItemJudge(object(), spec, index=tmp_path, items={}, agentic=True, tool_set="all")  # type: ignore[arg-type]
