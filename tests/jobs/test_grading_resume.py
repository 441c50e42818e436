import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from lhbench.store import Store
from lhbench.testing import ModelStub, rubric_judge_script
from tests.judges.helpers import JUDGE_NAMES, seed_runs


def judge_cmd(url: str, base_url: str, *extra: str) -> list[str]:
    panel = ",".join(f"openai:{n}@{base_url}" for n in JUDGE_NAMES)
    return [
        sys.executable,
        "-m",
        "lhbench",
        "judge",
        "--pack",
        "figma-mini",
        "--rubric",
        "figma-to-code",
        "--panel",
        panel,
        "--db",
        url,
        "--concurrency",
        "2",
        *extra,
    ]


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("LHBENCH_")}


def test_killed_job_resumes_with_only_the_missing_grades(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'kill.db'}"
    with Store.open(url) as store:
        seed_runs(store, 8)  # 8 runs x 3 judges = 24 grades
    with ModelStub(rubric_judge_script(), latency=0.25) as stub:
        proc = subprocess.Popen(
            judge_cmd(url, stub.base_url), env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 60
        done = 0
        with Store.open(url) as store:
            while done < 8 and time.monotonic() < deadline:
                time.sleep(0.1)
                done = len(store.list_grades())
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        with Store.open(url) as store:
            stored = len(store.list_grades())
        assert 8 <= stored < 24, stored
        first_requests = stub.count

        stub.reset()
        res = subprocess.run(
            judge_cmd(url, stub.base_url, "--json"),
            env=env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert res.returncode == 0, res.stderr
        out = json.loads(res.stdout)
        missing = 24 - stored
        assert out["skipped"] == stored and out["done"] == missing
        # only the missing grades were asked for; in-flight ones at the kill may come from the cache
        assert missing - 2 * 3 <= stub.count <= missing
        assert first_requests + stub.count >= 24
        assert len(out["runs"]) == 8 and all(len(r["judges"]) == 3 for r in out["runs"])

        stub.reset()
        again = subprocess.run(
            judge_cmd(url, stub.base_url, "--json"),
            env=env(),
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout)["done"] == 0
        assert stub.count == 0
    with Store.open(url) as store:
        grades = store.list_grades()
        assert len(grades) == 24
        assert len({g.key for g in grades}) == 24


def test_judge_without_models_says_which_setting(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'x.db'}"
    res = subprocess.run(
        [sys.executable, "-m", "lhbench", "judge", "--pack", "p", "--db", url],
        env=env(),
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert res.returncode == 2
    assert "--panel" in res.stderr and "judge_panel" in res.stderr and "Traceback" not in res.stderr
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "lhbench",
            "judge",
            "--pack",
            "p",
            "--panel",
            "nonsense",
            "--db",
            url,
        ],
        env=env(),
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert bad.returncode == 2 and "provider:model" in bad.stderr


def test_pairwise_votes_are_stored_apart_from_human_votes(tmp_path: Path) -> None:
    from lhbench.testing import StubReply

    url = f"sqlite:///{tmp_path / 'pw.db'}"
    with Store.open(url) as store:
        seed_runs(store, 6)  # tasks t0..t2, harnesses alternate: one cross-group pair per task

    def prefers_first(req):  # a position-following judge: both orders disagree -> tie
        return StubReply.call(
            req.tool_names[0], {"reasoning": "first looks fine", "preferred": "first"}
        )

    with ModelStub(prefers_first) as stub:
        cmd = [*judge_cmd(url, stub.base_url), "--pairwise", "--json"]
        res = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=120)
        assert res.returncode == 0, res.stderr
        first = json.loads(res.stdout)
        # 3 judges x 3 pairs
        assert (first["planned"], first["done"], first["skipped"], first["failed"]) == (9, 9, 0, 0)
        assert stub.count == 18  # both orders
        again = subprocess.run(cmd, env=env(), capture_output=True, text=True, timeout=120)
        assert json.loads(again.stdout)["skipped"] == 9 and stub.count == 18
    with Store.open(url) as store:
        votes = store.list_votes(rater_kind="llm")
        assert len(votes) == 9 and {v.winner for v in votes} == {"tie"}
        assert store.list_votes(rater_kind="human") == []
