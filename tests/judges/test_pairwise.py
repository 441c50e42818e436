import asyncio

from pydantic_ai import ModelResponse, ToolCallPart
from pydantic_ai.messages import ModelRequest, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from lhbench.judges import Evidence, PairwiseJudge
from lhbench.models import ModelPool, resolve_model
from lhbench.schema import JudgeKind
from tests.factories import make_run
from tests.judges.helpers import process_tier, trajectory_for


def compare(fn):
    rubric, tier = process_tier()
    spec = resolve_model("openai:pairwise@http://127.0.0.1:9/v1")
    a = Evidence(
        run=make_run("ra", task_id="t1"), task=None, trajectory=trajectory_for("ra", "QUALITY-HIGH")
    )
    b = Evidence(
        run=make_run("rb", task_id="t1"), task=None, trajectory=trajectory_for("rb", "QUALITY-LOW")
    )

    async def go():
        judge = PairwiseJudge(ModelPool().get(spec, wrapped=FunctionModel(fn)), spec)
        return await judge.compare(a, b, rubric, tier)

    return asyncio.run(go())


def prompt_of(messages) -> str:
    return "\n".join(
        p.content
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, UserPromptPart) and isinstance(p.content, str)
    )


def test_position_following_judge_gives_a_tie() -> None:
    def always_first(messages, info: AgentInfo) -> ModelResponse:
        return ModelResponse(
            parts=[
                ToolCallPart(info.output_tools[0].name, {"reasoning": "r", "preferred": "first"})
            ]
        )

    out = compare(always_first)
    assert (out.a_first, out.b_first, out.consistent) == ("a", "b", False)
    assert out.vote is not None and out.vote.winner == "tie"
    # the annotator names the judge as grades do: the model and, when not the default, its server
    assert out.vote.rater_kind == JudgeKind.LLM
    assert out.vote.annotator == "openai:pairwise@127.0.0.1:9"


def test_consistent_judge_names_the_better_run() -> None:
    def picks_quality(messages, info: AgentInfo) -> ModelResponse:
        text = prompt_of(messages)
        first_is_high = text.index("QUALITY-HIGH") < text.index("QUALITY-LOW")
        choice = "first" if first_is_high else "second"
        return ModelResponse(
            parts=[ToolCallPart(info.output_tools[0].name, {"reasoning": "r", "preferred": choice})]
        )

    out = compare(picks_quality)
    assert out.consistent and out.vote is not None and out.vote.winner == "a"
