"""Chapter rubrics synthesised from the annotators' criteria, on both scales (FunctionModel)."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, RetryPromptPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from lhbench.envs.content import GroundTruth
from lhbench.envs.content.chapter_rubrics import (
    SynthesisError,
    chapter_rubric_id,
    synthesise_chapter_rubric,
    write_rubric,
)
from lhbench.packs import load_pack
from lhbench.schema import AuthorKind, Scale
from lhbench.testing import ModelStub
from lhbench.testing.stub import StubReply, StubRequest
from tests.cli.helpers import cli
from tests.envs.content.conftest import PACK


def _answer(levels: list[int], n: int = 2) -> dict[str, Any]:
    return {
        "dimensions": [
            {
                "id": f"criterion_{i}",
                "name": f"Criterion {i}",
                "description": f"Whether the chapter meets annotator criterion {i}.",
                "evidence": ["narration", "slides"],
                "anchors": [{"level": lv, "text": f"level {lv} of criterion {i}"} for lv in levels],
            }
            for i in range(1, n + 1)
        ]
    }


def _model(answers: list[dict[str, Any]], seen: list[str]) -> FunctionModel:
    """Answers in turn; records the prompt and any retry feedback it was sent."""

    def fn(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        for m in messages:
            for p in getattr(m, "parts", []):
                if isinstance(p, RetryPromptPart) or getattr(p, "part_kind", "") == "tool-return":
                    seen.append(f"RETRY: {p.content}")
                elif getattr(p, "part_kind", "") == "user-prompt":
                    seen.append(str(p.content))
        tool = info.output_tools[0].name
        retries = sum(
            1
            for m in messages
            for p in getattr(m, "parts", [])
            if isinstance(p, RetryPromptPart) or getattr(p, "part_kind", "") == "tool-return"
        )
        k = min(retries, len(answers) - 1)
        return ModelResponse(parts=[ToolCallPart(tool, json.dumps(answers[k]))])

    return FunctionModel(fn, model_name="function:rubric-writer")


@pytest.mark.parametrize(
    ("scale", "levels"), [(Scale.ONE_TO_FIVE, [1, 2, 3, 4, 5]), (Scale.ZERO_TO_TWO, [0, 1, 2])]
)
def test_a_valid_answer_becomes_a_rubric_the_pack_loads(
    ground_truth: GroundTruth, tmp_path: Path, scale: Scale, levels: list[int]
) -> None:
    chapter = ground_truth.chapters[1]
    seen: list[str] = []
    rubric = asyncio.run(synthesise_chapter_rubric(_model([_answer(levels)], seen), chapter, scale))
    assert rubric.id == chapter_rubric_id(chapter.id, scale)
    assert rubric.author is AuthorKind.LLM
    assert "function:rubric-writer" in rubric.description and "sha256" in rubric.description
    dims = rubric.tiers[0].dimensions
    assert len(dims) == 2 and {d.scale for d in dims} == {scale}
    assert sorted(dims[0].anchors) == levels
    # the annotator's criteria were what the model was given
    assert all(c in seen[0] for c in chapter.criteria)
    pack = tmp_path / "pack"
    shutil.copytree(PACK, pack)
    write_rubric(rubric, pack / "rubrics")
    loaded = load_pack(pack).rubric(rubric.id)
    assert loaded.tiers[0].dimensions[0].anchors == dims[0].anchors


def test_an_invalid_answer_is_sent_back_with_the_reason_then_accepted(
    ground_truth: GroundTruth,
) -> None:
    seen: list[str] = []
    bad = _answer([1, 2, 3, 4])  # level 5 has no anchor
    rubric = asyncio.run(
        synthesise_chapter_rubric(
            _model([bad, _answer([1, 2, 3, 4, 5], n=1)], seen),
            ground_truth.chapters[0],
            Scale.ONE_TO_FIVE,
        )
    )
    retries = [s for s in seen if s.startswith("RETRY")]
    assert retries and "5" in retries[0] and "anchor" in retries[0]
    assert len(rubric.tiers[0].dimensions) == 1 and rubric.tiers[0].dimensions[0].weight == 1.0


@pytest.mark.parametrize(
    "answer",
    [
        _answer([1, 2, 3, 4, 5], n=4),  # more than three dimensions
        _answer([0, 1, 2]),  # the 3-point levels on the 5-point scale
        {"dimensions": []},
        {"not": "a rubric"},
    ],
)
def test_an_answer_that_never_fits_is_an_error_not_a_rubric(
    ground_truth: GroundTruth, tmp_path: Path, answer: dict[str, Any]
) -> None:
    with pytest.raises(SynthesisError, match="no valid 1-5 rubric"):
        asyncio.run(
            synthesise_chapter_rubric(
                _model([answer], []), ground_truth.chapters[2], Scale.ONE_TO_FIVE
            )
        )


def _rubric_writer(req: StubRequest) -> StubReply:
    """A stub model that writes a one-dimension rubric for the levels the prompt asks for."""
    m = re.search(r"give one anchor for each level: ([0-9, ]+)\.", req.text())
    assert m, "the prompt names the levels"
    levels = [int(x) for x in m.group(1).split(",")]
    return StubReply.call("final_result", _answer(levels, n=1))


def test_the_cli_writes_both_scales_for_every_chapter_through_a_real_endpoint(
    tmp_path: Path,
) -> None:
    pack = tmp_path / "pack"
    shutil.copytree(PACK, pack)
    with ModelStub(_rubric_writer) as stub:
        res = cli(
            "content",
            "synthesize-rubrics",
            str(pack),
            "--model",
            f"openai:rubric-writer@{stub.base_url}",
            "--out",
            str(pack / "rubrics"),
            "--db",
            f"sqlite:///{tmp_path / 's.db'}",
            "--json",
            env={"LHBENCH_HOME": str(tmp_path / "home")},
        )
    assert res.exit_code == 0, res.stderr
    written = sorted(Path(r["path"]).name for r in json.loads(res.stdout))
    ids = [c.id for c in load_pack(pack).rubrics if c.id.startswith("chapter-")]
    assert written == sorted(f"{i}.yaml" for i in ids)
    assert len(ids) == 3 * 2  # three chapters, two scales
    loaded = load_pack(pack)
    assert {d.scale for d in loaded.rubric("chapter-efficiency-3pt").tiers[0].dimensions} == {
        Scale.ZERO_TO_TWO
    }
