import json
from pathlib import Path

import pytest

from lhbench.schema import JudgeIdentity, JudgeKind, Verdict
from lhbench.store import Store
from tests.cli.helpers import Ran, cli


def lhbench(*args: str, cwd: Path) -> Ran:
    return cli(*args, cwd=cwd)


def test_aj_score_matches_hand_computed_metrics(tmp_path: Path) -> None:
    from tests.jobs.helpers import fixture_states

    url = f"sqlite:///{tmp_path / '.lhbench' / 'lhbench.db'}"
    with Store.open(url) as store:
        # two of the bundled tasks' fixtures, replayed and labelled
        fixture_states(tmp_path, {"fs-config-port", "fs-create-readme"}, store=store)
        labels = {lab.run_id: lab.passed for lab in store.list_labels()}
        runs = sorted(r for r in labels if r.startswith("aj-ds-mini--fs-"))[:8]
        # agent: right on all but one failing run; llm: says PASS to everything
        for k, rid in enumerate(runs):
            truth = labels[rid]
            agent = truth if k != 1 else not truth
            for kind, says in ((JudgeKind.AGENT, agent), (JudgeKind.LLM, True)):
                store.save_verdict(
                    Verdict(
                        id=f"{kind}-{rid}",
                        run_id=rid,
                        judge=JudgeIdentity(kind=kind, model="openai:m"),
                        verdict="PASS" if says else "FAIL",
                        key=f"{kind}-{rid}-key",
                        tools_used=[] if kind == JudgeKind.AGENT and k == 1 else ["read_file"],
                    )
                )
    res = lhbench("aj", "score", "--json", "--db", url, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    tables = json.loads(res.stdout)["tables"]
    f1 = {(r[0], r[1]): r for r in tables[0]["rows"]}
    truths = [labels[r] for r in runs]
    agent_preds = [t if k != 1 else not t for k, t in enumerate(truths)]
    tp = sum(t and p for t, p in zip(truths, agent_preds, strict=True))
    fp = sum((not t) and p for t, p in zip(truths, agent_preds, strict=True))
    fn = sum(t and not p for t, p in zip(truths, agent_preds, strict=True))
    cols = tables[0]["columns"]
    overall = cols.index("overall")
    assert f1[("openai:m", "✓")][overall] == pytest.approx(100 * 2 * tp / (2 * tp + fp + fn))
    llm_tp = sum(truths)
    llm_fp = len(truths) - llm_tp
    assert f1[("openai:m", "✗")][overall] == pytest.approx(100 * 2 * llm_tp / (2 * llm_tp + llm_fp))
    detail = {(r[1], r[2]): r for r in tables[1]["rows"]}
    assert detail[("✗", "FPR")][-1] == pytest.approx(100.0)  # it passes every failing run
    assert detail[("✗", "FNR")][-1] == pytest.approx(0.0)
    text = lhbench("aj", "score", "--db", url, cwd=tmp_path)
    assert "failure modes of wrong agent verdicts: (a) 1" in text.stdout
    tag = lhbench("aj", "tag", f"agent-{runs[1]}", "d", "--db", url, cwd=tmp_path)
    assert tag.returncode == 0
    assert "(d) 1" in lhbench("aj", "score", "--db", url, cwd=tmp_path).stdout
    assert lhbench("aj", "tag", "nope", "c", "--db", url, cwd=tmp_path).returncode == 2


def test_aj_run_without_a_model_names_the_setting(tmp_path: Path) -> None:
    res = lhbench("aj", "run", "--db", f"sqlite:///{tmp_path / 'x.db'}", cwd=tmp_path)
    assert res.returncode == 2 and "aj_model" in res.stderr and "--model" in res.stderr


def test_aj_run_end_to_end_against_the_stub(tmp_path: Path) -> None:
    import shutil

    from lhbench.packs import resolve_pack_dir
    from lhbench.testing import ModelStub, verdict_judge_script

    # a two-task slice of the bundled pack (one filesystem, one SQL): 8 trajectories
    pack = tmp_path / "pack"
    pack.mkdir()
    src = resolve_pack_dir("aj-ds-mini")
    shutil.copy(src / "pack.yaml", pack / "pack.yaml")
    for task in ("fs-sort-names", "sql-fix-typo"):
        shutil.copytree(src / "tasks" / task, pack / "tasks" / task)
    n = 8
    url = f"sqlite:///{tmp_path / 's.db'}"
    common = ["--db", url]
    with ModelStub(verdict_judge_script("PASS")) as stub:
        model = f"openai:judge@{stub.base_url}"
        agent = lhbench(
            "aj", "run", str(pack), "--judge", "agent", "--model", model, *common, cwd=tmp_path
        )
        assert agent.returncode == 0, agent.stderr[-2000:]
        agent_calls = stub.count
        llm = lhbench(
            "aj", "run", str(pack), "--judge", "llm", "--model", model, *common, cwd=tmp_path
        )
        assert llm.returncode == 0, llm.stderr[-2000:]
        # the agent judge looked at the state once, then answered: two requests per verdict
        assert agent_calls == 2 * n and stub.count == agent_calls + n
        again = lhbench(
            "aj", "run", str(pack), "--judge", "agent", "--model", model, *common, cwd=tmp_path
        )
        assert f"judge-states: planned {n} · skipped {n} (stored) · done 0" in again.stdout
        assert stub.count == agent_calls + n
    with Store.open(url) as store:
        verdicts = store.list_verdicts()
        agent_v = [v for v in verdicts if v.judge.kind == JudgeKind.AGENT]
        assert len(agent_v) == n
        assert all(
            v.tool_calls == 1 and v.tools_used[0] in ("list_directory", "list_tables")
            for v in agent_v
        )
        assert all(v.verdict == "PASS" for v in verdicts)
    scored = json.loads(lhbench("aj", "score", "--json", *common, cwd=tmp_path).stdout)
    rows = {(r[0], r[1]): r for r in scored["tables"][0]["rows"]}
    # everything PASS against 4 passing and 4 failing: precision 0.5, recall 1, F1 2/3
    overall = scored["tables"][0]["columns"].index("overall")
    assert rows[("openai:judge", "✓")][overall] == pytest.approx(200 / 3)
