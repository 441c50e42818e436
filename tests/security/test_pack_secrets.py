"""An agent cannot read what grades it: the bundled packs' answers are hidden in its sandbox.

lhbench's own code is visible in every sandbox (to run ``python -m lhbench…``), and the
bundled packs sit inside it. Their ground truth, reference solutions, labelled
trajectories and verify scripts are hidden from the agent's commands; what a pack's tools
serve stays readable, and a verify script given its task directory sees it whole.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from lhbench.envs import run_verify
from lhbench.packs import bundled_pack_dirs
from lhbench.sandbox import get_sandbox, private_paths
from tests.security.helpers import bounded, shell

PACKS = {d.name: d for d in bundled_pack_dirs()}


def test_private_paths_cover_every_bundled_verify_and_ground_truth() -> None:
    hidden = set(private_paths())
    # a hook check beside task.yaml is hidden as the verify script is
    assert PACKS["lhbench-samples"] / "tasks" / "ini-to-json" / "check.py" in hidden
    for pack in PACKS.values():
        for gt in (pack / "ground_truth", pack / "reference"):
            if gt.is_dir():
                assert gt in hidden
        for verify in pack.glob("tasks/*/verify.py"):
            assert verify in hidden


def test_the_agent_sees_no_answers_but_the_tools_data_stays(tmp_path: Path) -> None:
    verify = PACKS["lhbench-samples"] / "tasks" / "csv-region-totals" / "verify.py"
    gt = PACKS["figma-mini"] / "ground_truth"
    store = PACKS["figma-mini"] / "figma"
    trajectories = next(PACKS["aj-ds-mini"].glob("tasks/*/trajectories"))
    assert verify.read_text().strip() and any(gt.iterdir()) and any(trajectories.iterdir())
    with bounded(120):
        seen, _ = shell(
            tmp_path,
            f"cat {verify} 2>/dev/null | wc -c",
            f"ls -A {gt} | wc -l",
            f"ls -A {trajectories} | wc -l",
            f"ls -A {store} | wc -l",
        )
    counts = [int(s.strip().splitlines()[-1]) for s in seen]
    assert counts[:3] == [0, 0, 0], seen
    assert counts[3] == len(list(store.iterdir())) > 0


@pytest.mark.parametrize(
    "task_dir",
    sorted(p.parent for p in (PACKS["lhbench-samples"] / "tasks").glob("*/verify.py")),
    ids=lambda p: p.name,
)
def test_a_verify_script_still_sees_its_task(tmp_path: Path, task_dir: Path) -> None:
    probe = tmp_path / "probe" / "verify.py"
    probe.parent.mkdir()
    # a script in a directory of its own, given the task directory as its state
    probe.write_text(
        "import pathlib, sys\n"
        f"text = pathlib.Path({str(task_dir / 'verify.py')!r}).read_text()\n"
        "sys.exit(0 if 'def ' in text or 'import' in text else 1)\n"
    )
    res = run_verify(probe, root=task_dir, sandbox=get_sandbox())
    assert res.passed
