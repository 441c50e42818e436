import asyncio
from pathlib import Path

from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.messages import ModelRequest, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from lhbench.judges import VerdictItem, VerdictJudge
from lhbench.models import ModelPool, resolve_model
from tests.jobs.helpers import fixture_states

SPEC = resolve_model("openai:aj-judge@http://127.0.0.1:9/v1")


def replayed(tmp_path: Path, task: str):
    return {r.name: r for r in fixture_states(tmp_path, {task}).values()}


def returns(messages) -> list[ToolReturnPart]:
    return [
        p
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    ]


def run(fn, r, *, agentic=True, budget=5):
    async def go():
        judge = VerdictJudge(
            ModelPool().get(SPEC, wrapped=FunctionModel(fn)),
            SPEC,
            agentic=agentic,
            tool_budget=budget,
        )
        return await judge.judge(VerdictItem(r.run, r.task, r.trajectory, r.state.ref))

    return asyncio.run(go())


def checks_logs_dir(messages, info: AgentInfo) -> ModelResponse:
    """A scripted judge: look at logs/ in the live state, PASS only if all three logs are there."""
    done = returns(messages)
    names = {t.name for t in info.function_tools}
    assert {"list_directory", "read_file", "view_trajectory_step"} <= names
    if not done:
        return ModelResponse(parts=[ToolCallPart("list_directory", {"path": "logs"})])
    listing = str(done[-1].content)
    ok = all(f"logs/{n}.log" in listing for n in "abc")
    answer = {
        "verdict": "PASS" if ok else "FAIL",
        "evidence": [f"logs/ holds: {listing}"],
        "confidence": 0.9,
    }
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, answer)])


def test_scripted_agent_judge_reads_the_replayed_state(tmp_path: Path) -> None:
    states = replayed(tmp_path, "fs-move-logs")
    good = run(checks_logs_dir, states["pass-one-by-one"])
    assert good.verdict == "PASS" and good.tool_calls == 1 and good.tools_used == ["list_directory"]
    assert "logs/c.log" in good.evidence[0]
    # the partial move claims success in its trajectory; the live state says otherwise
    bad = run(checks_logs_dir, states["fail-partial-move"])
    assert bad.verdict == "FAIL" and "logs/c.log" not in bad.evidence[0]
    assert good.judge.kind.value == "agent" and good.key != bad.key


def test_sql_agent_judge_queries_a_read_only_database(tmp_path: Path) -> None:
    states = replayed(tmp_path, "sql-raise-prices")

    def checks_prices(messages, info: AgentInfo) -> ModelResponse:
        done = returns(messages)
        if not done:
            return ModelResponse(
                parts=[ToolCallPart("query", {"sql": "UPDATE products SET price_cents = 0"})]
            )
        if len(done) == 1:
            assert "read" in str(done[0].content).lower()  # the write was refused by the database
            return ModelResponse(
                parts=[
                    ToolCallPart(
                        "query", {"sql": "SELECT id, price_cents FROM products ORDER BY id"}
                    )
                ]
            )
        ok = "3 | 4000" in str(done[-1].content) and "1 | 1650" in str(done[-1].content)
        return ModelResponse(
            parts=[
                ToolCallPart(
                    info.output_tools[0].name,
                    {
                        "verdict": "PASS" if ok else "FAIL",
                        "evidence": [str(done[-1].content)],
                        "confidence": 1,
                    },
                )
            ]
        )

    assert run(checks_prices, states["pass-update"]).verdict == "PASS"
    assert run(checks_prices, states["fail-all-categories"]).verdict == "FAIL"


def test_budget_is_enforced_and_never_defaults(tmp_path: Path) -> None:
    r = replayed(tmp_path, "fs-sort-names")["pass-sorted"]
    calls = {"n": 0}

    def keeps_looking(messages, info: AgentInfo) -> ModelResponse:
        calls["n"] += 1
        return ModelResponse(parts=[ToolCallPart("list_directory", {"path": "."})])

    v = run(keeps_looking, r, budget=3)
    assert v.verdict is None and "UsageLimitExceeded" in (v.error or "")
    # the call that hit the budget is recorded but never ran
    assert v.tool_calls == 4 and calls["n"] <= 8

    def gives_up_then_answers(messages, info: AgentInfo) -> ModelResponse:
        if info.function_tools:  # the tool-using attempt: never stops looking
            return ModelResponse(parts=[ToolCallPart("read_file", {"path": "sorted.txt"})])
        # the re-ask, without tools, sees what was gathered
        return ModelResponse(
            parts=[
                ToolCallPart(
                    info.output_tools[0].name,
                    {"verdict": "PASS", "evidence": ["sorted.txt is sorted"], "confidence": 0.6},
                )
            ]
        )

    v2 = run(gives_up_then_answers, r, budget=2)
    assert v2.verdict == "PASS" and v2.error is None


def test_text_that_says_pass_is_not_a_verdict(tmp_path: Path) -> None:
    r = replayed(tmp_path, "fs-sort-names")["pass-sorted"]

    def says_pass(messages, info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart("VERDICT: PASS. The task is complete.")])

    for agentic in (True, False):
        v = run(says_pass, r, agentic=agentic)
        assert v.verdict is None and v.error
        assert "VERDICT: PASS" in (v.raw_output or "")


def test_llm_baseline_has_no_tools(tmp_path: Path) -> None:
    r = replayed(tmp_path, "fs-sort-names")["fail-descending"]

    def trusting(messages, info: AgentInfo) -> ModelResponse:
        assert info.function_tools == []
        return ModelResponse(
            parts=[
                ToolCallPart(
                    info.output_tools[0].name,
                    {"verdict": "PASS", "evidence": ["the agent said done"], "confidence": 0.5},
                )
            ]
        )

    v = run(trusting, r, agentic=False)
    assert v.verdict == "PASS" and v.tool_calls == 0 and v.judge.kind.value == "llm"
