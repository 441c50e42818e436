import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic_ai import ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from lhbench.judges import FailureExtractor
from lhbench.stats import error_events
from lhbench.stats import extraction_agreement as agreement
from lhbench.store import Store
from lhbench.testing import ModelStub, StubReply
from tests.ingest.helpers import import_paths
from tests.stats.test_taxonomy import load

FIX = Path(__file__).parent.parent / "ingest" / "fixtures"


def test_llm_extraction_uses_the_same_schema_and_agreement_is_computed() -> None:
    traj = load("codex_exec.jsonl", "codex")
    rules = error_events(traj)

    def echo_rules_but_one(messages, info: AgentInfo) -> ModelResponse:
        errs = [{"step": e.step, "type": e.type.value, "recovered": e.recovered} for e in rules]
        errs[1]["type"] = "other"  # disagree on one type
        errs.append({"step": 0, "type": "runtime_error", "recovered": False})  # and invent one
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {"errors": errs})])

    extracted = asyncio.run(FailureExtractor(FunctionModel(echo_rules_but_one)).extract(traj))
    assert [e.step for e in extracted] == [0, 2, 8]
    agree = agreement([("r", e) for e in rules], [("r", m) for m in extracted])
    assert (agree.matched, agree.rules_only, agree.model_only) == (2, 0, 1)
    assert agree.type_agreement == 0.5 and agree.recovery_agreement == 1.0
    assert agree.type_kappa == pytest.approx(1 / 3)  # p_o = 0.5, p_e = 0.25


def test_failures_cli_with_and_without_a_model(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'f.db'}"
    with Store.open(url) as store:
        import_paths(store, [FIX / "codex_exec.jsonl", FIX / "gemini_stream.jsonl"])
    env = {k: v for k, v in os.environ.items() if not k.startswith("LHBENCH_")}
    base = [sys.executable, "-m", "lhbench", "failures", "--db", url, "--json"]
    out = json.loads(
        subprocess.run(base, capture_output=True, text=True, env=env, check=True).stdout
    )
    assert {t["type"]: t["count"] for t in out["types"]} == {
        "git_error": 1,
        "tool_call_failure": 1,
        "dependency_error": 1,
    }
    with ModelStub(lambda req: StubReply.call(req.tool_names[0], {"errors": []})) as stub:
        res = subprocess.run(
            [*base, "--llm", f"openai:extractor@{stub.base_url}"],
            capture_output=True,
            text=True,
            env=env,
        )
        assert res.returncode == 0, res.stderr
        agree = json.loads(res.stdout)["llm_agreement"]
        assert (agree["matched"], agree["rules_only"], agree["model_only"]) == (0, 3, 0)
        assert stub.count == 2
