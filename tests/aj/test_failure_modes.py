"""Failure modes (a)/(b) stored on wrong agent verdicts; reviewer tags are kept."""

from __future__ import annotations

import asyncio
from pathlib import Path

from lhbench.config import Settings
from lhbench.jobs import resolve_pack, run_job
from lhbench.jobs.aj_search import SearchFixtureJob
from lhbench.jobs.verdicts import store_failure_modes
from lhbench.schema import JudgeIdentity, JudgeKind, Label, Verdict
from lhbench.store import Store


def test_wrong_agent_verdicts_are_tagged_by_rule(tmp_path: Path) -> None:
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store:
        loaded = resolve_pack("aj-search-mini", Settings(home=tmp_path / "home"), store)
        asyncio.run(run_job(SearchFixtureJob(store, loaded)))
        runs = sorted(r.id for r in store.list_runs(pack_id="aj-search-mini"))[:6]
        agent = JudgeIdentity(kind=JudgeKind.AGENT, model="m")
        llm = JudgeIdentity(kind=JudgeKind.LLM, model="m")
        # run -> (judge, says PASS, tools, reviewer tag); every label is FAIL
        cases = {
            runs[0]: (agent, True, [], None),  # (a): never looked
            runs[1]: (agent, True, ["view_trajectory_step"], None),  # (b): not the web
            runs[2]: (agent, True, ["open_url"], None),  # looked: needs a reviewer
            runs[3]: (agent, True, [], "d"),  # a reviewer's tag stays
            runs[4]: (agent, False, [], None),  # right: no mode
            runs[5]: (llm, True, [], None),  # not an agent judge
        }
        for rid, (judge, says, tools, tag) in cases.items():
            store.save_label(Label(run_id=rid, passed=False, source="verify:x"))
            store.save_verdict(
                Verdict(
                    id=f"v-{rid}",
                    run_id=rid,
                    judge=judge,
                    verdict="PASS" if says else "FAIL",
                    tools_used=tools,
                    failure_mode=tag,
                    key=f"k-{rid}",
                )
            )
        assert store_failure_modes(store, loaded) == 2
        assert store_failure_modes(store, loaded) == 0  # idempotent
        modes = {v.run_id: v.failure_mode for v in store.list_verdicts()}
    assert [modes[r] for r in runs] == ["a", "b", None, "d", None, None]
