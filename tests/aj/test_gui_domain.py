"""The GUI (office) domain end to end: trajectories labelled by checkers, judged in the state."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from lhbench.config import Settings
from lhbench.jobs import resolve_pack
from lhbench.packs import resolve_pack_dir
from lhbench.schema import JudgeKind
from lhbench.stats import binary_metrics
from lhbench.store import Store
from lhbench.testing import ModelStub, StubReply, StubRequest
from tests.cli.helpers import cli

IMAGES_SEEN: list[str] = []  # image parts the judge model was sent (data URLs, cut)
TASK = re.compile(r'<task untrusted="true">\n(.*?)\n</task>', re.S)


def intent(run_id: str) -> bool:
    """What the trajectory's author meant: its name says ``pass-*`` or ``fail-*``."""
    return run_id.rsplit("--", 1)[1].startswith("pass-")


def gui_judge_script(req: StubRequest) -> StubReply:
    """Look at the final document once, then PASS iff it shows the task's last quoted text."""
    m = TASK.search(req.text())
    assert m is not None, "the prompt must show the task"
    target = re.findall(r'"([^"]+)"', m.group(1))[-1]
    IMAGES_SEEN.extend(
        part["image_url"]["url"][:30]
        for msg in req.messages
        if isinstance(msg.get("content"), list)
        for part in msg["content"]
        if isinstance(part, dict) and part.get("type") == "image_url"
    )
    results = req.tool_results()
    if not results:
        if "read_document" in req.tool_names:
            return StubReply.call("read_document", {})
        if "render_pages" in req.tool_names:
            return StubReply.call("render_pages", {"first": 1, "last": 3})
        ok = True  # without tools: believe the agent
    else:
        ok = target in results[-1]
    seen = results[-1][:200] if results else ""
    answer = {"verdict": "PASS" if ok else "FAIL", "evidence": [seen], "confidence": 0.6}
    return StubReply.call("final_result", answer)


def subset_pack(tmp_path: Path, tasks: list[str]) -> Path:
    src = resolve_pack_dir("aj-gui-mini")
    pack = tmp_path / "pack"
    pack.mkdir()
    shutil.copy(src / "pack.yaml", pack / "pack.yaml")
    for t in tasks:
        shutil.copytree(src / "tasks" / t, pack / "tasks" / t)
    return pack


def _tables(url: str, cwd: Path) -> list[dict[str, object]]:
    res = cli("aj", "score", "--json", "--db", url, cwd=cwd)
    assert res.exit_code == 0, res.stderr[-1000:]
    return json.loads(res.stdout)["tables"]


def test_aj_run_gui_pack_with_agent_and_llm_judges(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 's.db'}"
    with ModelStub(gui_judge_script) as stub:
        model = f"openai:judge@{stub.base_url}"
        for kind, extra in (("agent", ["--modality", "a11y"]), ("llm", [])):
            res = cli(
                "aj", "run", "aj-gui-mini", "--judge", kind, "--model", model,
                "--concurrency", "2", "--db", url, *extra, cwd=tmp_path,
            )  # fmt: skip
            assert res.exit_code == 0, res.stderr[-2000:]
            assert "20 run(s); 20 labelled (9 pass)" in res.stdout
        assert stub.count == 2 * 20 + 20
    with Store.open(url) as store:
        stored = {lab.run_id: lab for lab in store.list_labels()}
        labels = {k: bool(lab.passed) for k, lab in stored.items()}
        verdicts = store.list_verdicts()
        tasks = {
            t.id: t for t in resolve_pack("aj-gui-mini", Settings(home=tmp_path), store).pack.tasks
        }
    # labels reproduce for every task: the checkers agree with each trajectory's intent
    assert len(labels) == 20 and sum(labels.values()) == 9
    assert {k: lab.detail for k, lab in stored.items() if labels[k] != intent(k)} == {}
    assert sorted(t.tags.subdomain or "" for t in tasks.values()) == sorted(
        ["excel", "powerpoint", "word"] * 3
    )
    for tid in tasks:  # each task has a passing and a failing final state
        assert {v for k, v in labels.items() if f"--{tid}--" in k} == {True, False}, tid
    assert "formula" in stored["aj-gui-mini--excel-total-formula--fail-short-range"].detail
    # result.txt (OSWorld's score, written by the generator from the checkers) agrees
    pack = resolve_pack_dir("aj-gui-mini")
    for k, passed in labels.items():
        _, task, name = k.split("--")
        score = float((pack / "tasks" / task / "trajectories" / name / "result.txt").read_text())
        assert (score == 1.0) == passed, k
    agent = {v.run_id: v for v in verdicts if v.judge.kind == JudgeKind.AGENT}
    llm = {v.run_id: v for v in verdicts if v.judge.kind == JudgeKind.LLM}
    assert len(agent) == len(llm) == 20
    assert all(v.tools_used == ["read_document"] for v in agent.values())
    assert all(v.judge.settings["modality"] == "a11y" for v in agent.values())
    assert all("modality" not in v.judge.settings and v.tool_calls == 0 for v in llm.values())
    # the agent saw the saved document: the unsaved replace (screen only) fails there
    assert agent["aj-gui-mini--word-replace-name--fail-not-saved"].verdict == "FAIL"
    assert agent["aj-gui-mini--word-replace-name--pass-replace-all"].verdict == "PASS"
    assert "Borealis Group" in agent["aj-gui-mini--word-replace-name--pass-replace-all"].evidence[0]
    assert all(v.verdict == "PASS" for v in llm.values())
    # the breakdown's per-domain row equals the F1 computed by hand from the verdicts
    ids = sorted(labels)
    hand = binary_metrics([labels[r] for r in ids], [agent[r].verdict for r in ids]).f1
    domains = next(t for t in _tables(url, tmp_path) if "subdomain" in t["columns"])
    cols = domains["columns"]
    row = next(
        r for r in domains["rows"]
        if r[cols.index("agentic")] == "✓" and r[cols.index("subdomain")] == "(domain)"
    )  # fmt: skip
    assert row[cols.index("domain")] == "gui"
    assert row[cols.index("f1")] == pytest.approx(100 * hand)


def test_modality_ablation_is_stored_and_shown(tmp_path: Path) -> None:
    pack = subset_pack(tmp_path, ["word-replace-name", "excel-price-format", "ppt-bold-title"])
    url = f"sqlite:///{tmp_path / 's.db'}"
    IMAGES_SEEN.clear()
    with ModelStub(gui_judge_script) as stub:
        model = f"openai:judge@{stub.base_url}"
        for modality in ("screenshot", "a11y", "both"):
            res = cli(
                "aj", "run", str(pack), "--judge", "agent", "--model", model,
                "--modality", modality, "--concurrency", "2", "--db", url, cwd=tmp_path,
            )  # fmt: skip
            assert res.exit_code == 0, res.stderr[-2000:]
            assert "7 run(s); 7 labelled" in res.stdout
        bad = cli("aj", "run", str(pack), "--judge", "agent", "--model", model,
                  "--modality", "smell", "--db", url, cwd=tmp_path)  # fmt: skip
        assert bad.exit_code == 2 and "modality" in bad.stderr
        other = cli("aj", "run", "aj-ds-mini", "--judge", "agent", "--model", model,
                    "--modality", "a11y", "--db", url, cwd=tmp_path)  # fmt: skip
        assert other.exit_code == 2 and "only gui packs do" in other.stderr
    with Store.open(url) as store:
        labels = {lab.run_id: bool(lab.passed) for lab in store.list_labels()}
        verdicts = store.list_verdicts()
    by_mod: dict[str, dict[str, str]] = {}
    for v in verdicts:
        by_mod.setdefault(str(v.judge.settings["modality"]), {})[v.run_id] = str(v.verdict)
    assert sorted(by_mod) == ["a11y", "both", "screenshot"]
    shots = [v for v in verdicts if v.judge.settings["modality"] == "screenshot"]
    # screenshot only: the rendered pages are images, the text is not there to read
    assert all(v.tools_used == ["render_pages"] for v in shots)
    assert all(v.verdict == "FAIL" for v in shots)
    for v in shots:  # the tool answered (pages drawn), not an error
        assert "pages 1-1 of 1" in v.evidence[0], v.evidence
    # the rendered pages reached the judge model as images
    assert len(IMAGES_SEEN) >= 7 and all(u.startswith("data:image/png") for u in IMAGES_SEEN)
    table = next(t for t in _tables(url, tmp_path) if "modality" in t["columns"])
    cols = table["columns"]
    rows = {r[cols.index("modality")]: r for r in table["rows"]}
    assert sorted(rows) == ["a11y", "both", "screenshot"]
    ids = sorted(labels)
    for mod, got in by_mod.items():
        f1 = binary_metrics([labels[r] for r in ids], [got[r] for r in ids]).f1
        assert rows[mod][cols.index("pooled F1")] == pytest.approx(100 * f1), mod
        assert rows[mod][cols.index("n")] == 7
