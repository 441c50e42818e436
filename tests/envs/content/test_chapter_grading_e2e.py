"""``lhbench run content-mini --harness native`` with the local stub as agent and judges,
then chapter rubrics synthesised into the store, every chapter graded with the generic and
the chapter rubrics on both scales, course scores and the report's 3-point vs 5-point section.
"""

from __future__ import annotations

import json
from pathlib import Path

from lhbench.envs.content import load_ground_truth
from lhbench.reporting import ReportData, write_report
from lhbench.schema import GradeStatus, Scale
from lhbench.stats.course import course_scores
from lhbench.store import Store
from lhbench.testing import ModelStub
from lhbench.testing.content_agent import content_agent_script
from tests.cli.helpers import cli
from tests.envs.content.conftest import GT_FILE

SCALES = {Scale.ZERO_TO_TWO, Scale.ONE_TO_FIVE}


def test_a_native_run_is_graded_per_chapter_on_both_scales_end_to_end(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'e2e.db'}"
    env = {"LHBENCH_HOME": str(tmp_path / "home")}
    chapters = {c.id for c in load_ground_truth(GT_FILE).chapters}
    with ModelStub(content_agent_script()) as stub:
        agent = f"openai:stub-agent@{stub.base_url}"
        ran = cli(
            "run", "content-mini", "--harness", "native", "--model", agent,
            "--repeats", "2", "--db", db, "--json", env=env,
        )  # fmt: skip
        assert ran.exit_code == 0, ran.stderr
        with Store.open(db) as store:
            runs = store.list_runs(pack_id="content-mini")
            assert len(runs) == 2 and all(r.status.value == "completed" for r in runs)
            for run in runs:  # the agent used the content tools
                used = {s.tool_name for s in store.get_trajectory(run.id).steps if s.tool_name}
                assert any(t.endswith("write_chapter") for t in used), used
                assert any(t.endswith("read_source") for t in used), used

        # chapter rubrics: both scales for every chapter, stored with provenance
        writer = f"openai:rubric-writer@{stub.base_url}"
        syn = cli("content", "synthesize-rubrics", "content-mini", "--model", writer,
                  "--db", db, "--json", env=env)  # fmt: skip
        assert syn.exit_code == 0, syn.stderr
        rows = json.loads(syn.stdout)
        assert {(r["chapter"], r["scale"]) for r in rows} == {
            (c, s.value) for c in chapters for s in SCALES
        }
        assert all(r["new"] for r in rows)
        calls = stub.count
        again = cli("content", "synthesize-rubrics", "content-mini", "--model", writer,
                    "--db", db, "--json", env=env)  # fmt: skip
        assert again.exit_code == 0, again.stderr
        assert not any(r["new"] for r in json.loads(again.stdout))  # reused, not duplicated
        assert stub.count == calls  # and no model call
        with Store.open(db) as store:
            records = store.list_chapter_rubrics(pack_id="content-mini")
        assert len(records) == len(chapters) * 2
        for rec in records:
            assert rec.model == "rubric-writer" or rec.model.endswith("rubric-writer")
            assert rec.annotations_sha256 and rec.ground_truth_sha256 and rec.prompt_version
            dims = rec.rubric.tiers[0].dimensions
            assert len(dims) in (1, 2, 3) and {d.scale for d in dims} == {rec.scale}
            assert rec.chapter_id in dims[0].anchors[rec.scale.high]  # written for that chapter

        # every chapter x rubric x scale graded by the (stub) output judge
        judge = f"openai:judge-a@{stub.base_url}"
        graded = cli("content", "grade-chapters", "content-mini", "--panel", judge,
                     "--db", db, "--json", env=env)  # fmt: skip
        assert graded.exit_code == 0, graded.stderr
        out = json.loads(graded.stdout)
        expected = len(runs) * len(chapters) * 2 * 2  # runs x chapters x (generic+own) x scales
        assert out["grades"] == expected
        assert out["summary"][0]["done"] == expected
        rerun = cli("content", "grade-chapters", "content-mini", "--panel", judge,
                    "--db", db, "--json", env=env)  # fmt: skip
        assert rerun.exit_code == 0, rerun.stderr
        again_out = json.loads(rerun.stdout)
        assert again_out["summary"][0]["skipped"] == expected
        assert again_out["summary"][0]["done"] == 0
        # each judge request shows one chapter's files, not the whole course
        prompts = [json.dumps(r.body) for r in stub.requests if r.model == "judge-a"]
        eff = [p for p in prompts if "chapter-brief/efficiency" in p]
        assert eff and all("course/chapters/efficiency.md" in p for p in eff)
        assert not any("course/chapters/installation.md" in p for p in eff)

    with Store.open(db) as store:
        grades = store.list_chapter_grades()
        assert len(grades) == expected and len({g.key for g in grades}) == expected
        cells = {(g.run_id, g.chapter_id, g.kind, g.scale) for g in grades}
        assert cells == {
            (r.id, c, k, s) for r in runs for c in chapters for k in ("generic", "chapter")
            for s in SCALES
        }  # fmt: skip
        assert all(g.grade.status is GradeStatus.OK for g in grades)
        generic = [g for g in grades if g.kind == "generic"]
        assert all(len(g.grade.scores) == 5 for g in generic)
        scores = course_scores(grades)
        assert set(scores) == {(r.id, s) for r in runs for s in SCALES}
        assert all(cs.n == len(chapters) and not cs.excluded for cs in scores.values())
        assert all(0.0 <= cs.mean <= 1.0 for cs in scores.values())
        data = ReportData.from_store(store)
    files = write_report(data, tmp_path / "report")
    md = files.markdown.read_text()
    assert "Programmatic content: 3-point vs 5-point chapter scores" in md
    per_run = (tmp_path / "report/content_scales_runs.csv").read_text().splitlines()
    assert per_run[0].startswith("agent,run,3-point score,3-point n")
    assert len(per_run) == 1 + len(runs)
    for line in per_run[1:]:
        cols = line.split(",")
        assert cols[3] == str(len(chapters)) and cols[7] == str(len(chapters))
    # both runs are one agent's (two repeats): no chapter-level comparison between agents
    summary = (tmp_path / "report/content_scales_summary.csv").read_text().splitlines()
    assert [r.split(",")[:3] for r in summary[1:]] == [["3-point", "0", "0"], ["5-point", "0", "0"]]
    # Table 6: one agent, one course (its two runs averaged), six chapter scores behind it
    agents = (tmp_path / "report/content_course_scores.csv").read_text().splitlines()
    assert len(agents) == 2
    cols = dict(zip(agents[0].split(","), agents[1].split(","), strict=True))
    assert (cols["3-point courses"], cols["3-point chapters"]) == ("1", str(2 * len(chapters)))
    assert "resamples only 1 courses (< 5)" in md
    assert "95% t-interval over the run's chapter scores" in md
    assert "score/5 on the 5-point scale" in md and "bootstrap over courses" in md
