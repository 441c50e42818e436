import asyncio

from pydantic_ai import Agent

from lhbench.models import ModelPool, current_ledger, resolve_model
from lhbench.store import Store
from lhbench.testing import ModelStub, StubReply, StubRequest
from lhbench.testing.stub import Fault

FAULTS: dict[int, Fault] = {0: "500", 1: "429", 2: "timeout"}


def script(req: StubRequest) -> StubReply:
    fault = FAULTS.get(req.index)
    return StubReply(fault=fault, content=None if fault else "done")


def test_every_attempt_is_in_the_ledger_and_reaches_the_server(tmp_path) -> None:
    store = Store.open(f"sqlite:///{tmp_path / 'r.db'}")
    with ModelStub(script, timeout_hold=2.0) as stub:
        spec = resolve_model(
            "j",
            {
                "j": {
                    "model": f"openai:j@{stub.base_url}",
                    "timeout_s": 0.5,
                    "max_retries": 5,
                    "backoff_s": 0.01,
                    "backoff_max_s": 0.02,
                }
            },
        )

        async def go() -> tuple[str, int]:
            pool = ModelPool(store, seed=0)
            async with pool.session():
                with current_ledger() as ledger:
                    out = await Agent(pool.get(spec)).run("hi")
                return out.output, ledger.requests

        output, attempts = asyncio.run(go())
        log = stub.requests
    assert output == "done"
    # 500, 429 and a timed-out attempt were retried: four attempts, all seen by the server
    assert attempts == 4 == len(log)
    assert [r.fault for r in log] == ["500", "429", "timeout", None]
    store.close()
