"""`lhbench run figma-mini --harness native` with the model stub, end to end.

The stub (a scripted HTTP server speaking OpenAI's protocol, not a model) calls the nine
design tools and Framelink's two through the pack's MCP server, whose fixture server is
rate limited as the pack says: the 429s reach the agent, which waits and retries. It
writes a page, previews it, and finishes; the run is then verified, which runs the
output checks in the sandbox and stores a label, a programmatic grade on the
figma-checks rubric and the judge's frames. The failure taxonomy counts the 429s as
Figma API errors (tool-call failures) that were recovered.
"""

from __future__ import annotations

import json
from pathlib import Path

from lhbench.judges import Evidence, RubricJudge
from lhbench.models import ModelPool, resolve_model
from lhbench.packs import load_pack
from lhbench.schema import Role, Step, StepKind, TierKind, Trajectory
from lhbench.stats import error_events
from lhbench.stats.taxonomy import ErrorType, figma_api_errors, soft_failure
from lhbench.store import Store
from lhbench.testing import ModelStub
from lhbench.testing.scripts import figma_agent_script
from lhbench.tools.figma_server import DESIGN_TOOLS
from tests.cli.helpers import cli
from tests.envs.figma.helpers import PACK

_429 = '{"status": "error", "error": "Figma API error: 429 - {\\"status\\":429}", "retry_after": 6}'


def test_native_run_with_the_stub_exercises_tools_preview_and_checks(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'store.db'}"
    env = {"LHBENCH_HOME": str(tmp_path / "home")}
    with ModelStub(figma_agent_script()) as stub:
        ran = cli(
            "run",
            "figma-mini",
            "--harness",
            "native",
            "--model",
            f"openai:stub@{stub.base_url}",
            "--tasks",
            "landing-page",
            "--parallel",
            "1",
            "--db",
            db,
            env=env,
        )
    assert ran.exit_code == 0, ran.stdout + ran.stderr
    store = Store.open(db)
    [run] = store.list_runs()
    traj = store.get_trajectory(run.id)
    results = [s for s in traj.steps if s.kind == StepKind.TOOL_RESULT]
    called = {str(s.tool_name).removeprefix("figma_") for s in results}
    assert set(DESIGN_TOOLS) <= called
    assert {"get_figma_data", "download_figma_images"} <= called
    assert {"create_app_preview", "get_preview_status", "stop_app_preview"} <= called
    preview = next(s for s in results if str(s.tool_name).endswith("create_app_preview"))
    assert json.loads(str(preview.tool_output))["status"] == "running"
    # the fixture server's 429s reached the agent, and it recovered from each
    refused = [s for s in results if "Figma API error: 429" in str(s.tool_output)]
    assert refused, "the pack's rate limit should refuse a burst of design calls"
    events = error_events(traj)
    figma = figma_api_errors(events)
    assert len(figma) == len(refused)
    assert all(e.type == ErrorType.TOOL_CALL_FAILURE and e.recovered for e in figma)
    failures = json.loads(cli("failures", "--json", "--db", db, env=env).stdout)
    tool_failures = next(t for t in failures["types"] if t["type"] == "tool_call_failure")
    assert tool_failures["count"] >= len(refused)
    # verified: the output checks ran on the final workspace and left their evidence
    labels = {lab.source.split(":", 1)[0]: lab for lab in store.list_labels(run_ids=[run.id])}
    assert set(labels) == {"figma", "figma-deploy"}
    label, deploy = labels["figma"], labels["figma-deploy"]
    assert label.source.startswith("figma:landing-page") and label.error is None, label
    assert "routes 2/2" in label.detail and "fidelity" in label.detail
    # the stub's app runs (built & deployed) but is not LH-Bench's pass: no colours, no layout
    assert deploy.passed is True and label.passed is False, label.detail
    [grade] = store.list_grades(run_ids=[run.id])
    assert grade.rubric_id == "figma-checks" and grade.judge.model == "lhbench.figma-checks"
    by_dim = {s.dimension_id: s for s in grade.scores}
    # the stub's page has the design's texts but none of its colours or layout
    assert by_dim["component_coverage"].score is not None
    assert by_dim["visual_fidelity"].score is not None and by_dim["visual_fidelity"].score <= 2
    names = {a.name for a in store.list_artifacts(run.id)}
    assert {
        "figma-checks/10-1/reference.png",
        "figma-checks/10-1/captured.png",
        "figma-checks/60-1/reference.png",
        "figma-checks/findings.json",
    } <= names
    # the output judge's prompt carries each frame's reference and capture, and the findings
    rubric = next(r for r in load_pack(PACK).rubrics if r.id == "figma-to-code")
    evidence = Evidence(run, None, traj, store.list_artifacts(run.id))
    spec = resolve_model("openai:judge@http://127.0.0.1:9/v1")
    judge = RubricJudge(ModelPool(None).get(spec), spec)
    parts, _ = judge.prompt(evidence, rubric, rubric.tier(TierKind.OUTPUT))
    labels = [p for p in parts if isinstance(p, str)]
    for frame in ("10-1", "60-1"):
        for kind in ("reference", "captured"):
            assert f"Image artifact figma-checks/{frame}/{kind}.png:" in labels
    assert "figma-checks/findings.json" in labels[0] and "missing_texts" in labels[0]
    store.close()


def test_soft_errors_of_design_tools_are_failures_and_others_are_not() -> None:
    assert soft_failure("figma_get_node_tree", _429)
    assert soft_failure("mcp__figma__create_app_preview", '{"status":"error","error":"x"}')
    assert not soft_failure("figma_get_node_tree", '{"status": "success"}')
    # an ordinary tool printing the same JSON is not a design-tool failure
    assert not soft_failure("read_file", _429)
    steps = [
        Step(index=0, role=Role.USER, kind=StepKind.MESSAGE, content="build it"),
        Step(
            index=1,
            role=Role.ASSISTANT,
            kind=StepKind.TOOL_CALL,
            tool_name="figma_get_node_tree",
            tool_call_id="c1",
            tool_input={"file_key": "K", "node_id": "1:2"},
        ),
        Step(
            index=2,
            role=Role.TOOL,
            kind=StepKind.TOOL_RESULT,
            tool_name="figma_get_node_tree",
            tool_call_id="c1",
            tool_output=_429,
        ),
        Step(
            index=3,
            role=Role.ASSISTANT,
            kind=StepKind.TOOL_CALL,
            tool_name="figma_get_node_tree",
            tool_call_id="c2",
            tool_input={"file_key": "K", "node_id": "1:2"},
        ),
        Step(
            index=4,
            role=Role.TOOL,
            kind=StepKind.TOOL_RESULT,
            tool_name="figma_get_node_tree",
            tool_call_id="c2",
            tool_output='{"status": "success", "node": {}}',
        ),
    ]
    events = error_events(Trajectory(run_id="r", steps=steps))
    [event] = figma_api_errors(events)
    assert event.type == ErrorType.TOOL_CALL_FAILURE and event.recovered
    # without the successful retry the failure stays unrecovered
    [alone] = figma_api_errors(error_events(Trajectory(run_id="r", steps=steps[:3])))
    assert not alone.recovered
