import asyncio
from collections import Counter

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from lhbench.judges import RubricJudge
from lhbench.models import ModelPool, WireTransport
from lhbench.schema import GradeStatus
from lhbench.store import Store
from lhbench.store.tables import GradeRow
from lhbench.testing import ModelStub, rubric_judge_script
from tests.judges.helpers import grade_job, process_tier, seed_runs, stub_specs


def test_twenty_percent_faults_every_grade_completes_or_is_an_explicit_error(tmp_path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'faults.db'}")
    runs = seed_runs(store, 20)
    rubric, tier = process_tier()
    stub = ModelStub(rubric_judge_script(), fault_rate=0.2, seed=7, timeout_hold=3.0)
    with stub:

        async def job():
            pool = ModelPool(store, seed=1)
            async with pool.session():
                specs = stub_specs(stub.base_url, timeout_s=1.0, max_retries=6)
                judges = [RubricJudge(pool.get(s), s) for s in specs]
                # the direct path: lhbench's own wire client, no agent loop
                assert all(isinstance(j.client.transport, WireTransport) for j in judges)
                return await grade_job(store, runs, rubric, tier, judges, concurrency=16)

        summary = asyncio.run(job())
    log = stub.requests
    faults = Counter(r.fault for r in log if r.fault)
    # every kind of fault was exercised
    assert set(faults) == {"429", "500", "timeout", "truncated", "malformed"}, faults
    # 60 grades, each stored once, none lost
    assert summary.ran == 60
    with Session(store.engine) as s:
        assert s.scalar(select(func.count()).select_from(GradeRow)) == 60
    grades = store.list_grades()
    assert len({(g.run_id, g.judge.model) for g in grades}) == 60
    for g in grades:
        if g.status == GradeStatus.OK:
            assert len(g.scores) == 4 and g.tier_score is not None
        else:
            assert g.tier_score is None and not any(s.score is not None for s in g.scores)
            assert g.error or g.raw_output
    assert summary.done >= 50
    # the request count shows the retries, and every request the stub saw is accounted to a
    # grade; on a loaded machine an attempt can time out before the stub reads it, so the
    # client's count may exceed the stub's but never fall below it
    assert len(log) > 60
    assert sum(g.usage.requests for g in grades) >= len(log)
    store.close()
