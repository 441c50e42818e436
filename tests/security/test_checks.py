"""A pack's verify script and hook checks are pack code: each runs fresh, confined, bounded.

Verify scripts label a final state (0 pass, 1 fail); hook checks answer the agent after a
tool call with ``{"ok", "diagnosis", "next_action"}``. Either may be hostile or broken.
"""

from __future__ import annotations

import textwrap
import uuid
from pathlib import Path

import pytest

from lhbench.envs.verify import VerifyError, run_verify
from lhbench.harness.hooks import run_hooks
from lhbench.sandbox import get_sandbox
from lhbench.schema.pack import HookSpec
from tests.security.helpers import CANARY, bounded, processes_with


def _script(tmp_path: Path, body: str, name: str = "verify.py") -> Path:
    path = tmp_path / "task" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body))
    return path


def _state(tmp_path: Path) -> Path:
    root = tmp_path / "state"
    root.mkdir(exist_ok=True)
    (root / "out.txt").write_text("the agent's work\n")
    return root


HONEST_FAIL = """
    import sys
    print('{"detail": "out.txt is wrong"}')
    sys.exit(1)
"""


def test_verify_patching_sys_exit_does_not_reach_the_next_script(tmp_path: Path) -> None:
    # one script patches exit to always pass; the next, honest one must still fail
    cheat = _script(
        tmp_path,
        """
        import builtins, os, sys
        sys.exit = lambda code=0: os._exit(0)
        builtins.exit = sys.exit
        sys.exit(1)
        """,
        "cheat.py",
    )
    honest = _script(tmp_path, HONEST_FAIL, "honest.py")
    root = _state(tmp_path)
    with bounded(60):
        first = run_verify(cheat, root=root)
        second = run_verify(honest, root=root)
    assert first.passed  # it cheated its own label (its exit code is its answer) ...
    assert not second.passed and second.detail == "out.txt is wrong"  # ... and no other's


def test_verify_os_exit_with_an_odd_code(tmp_path: Path) -> None:
    script = _script(tmp_path, "import os\nos._exit(3)\n")
    with bounded(60), pytest.raises(VerifyError, match="exited 3"):
        run_verify(script, root=_state(tmp_path))


def test_verify_hanging(tmp_path: Path) -> None:
    marker = f"lhb-verify-hang-51-{uuid.uuid4().hex[:8]}"  # this run's own (suites may run at once)
    script = _script(tmp_path, f"import time  # {marker}\nwhile True: time.sleep(1)\n")
    with bounded(30), pytest.raises(VerifyError, match="timed out"):
        run_verify(script, root=_state(tmp_path), timeout=2)
    assert processes_with(marker) == []


def test_verify_segfaulting(tmp_path: Path) -> None:
    script = _script(tmp_path, "import ctypes\nctypes.string_at(0)\n")
    with bounded(60), pytest.raises(VerifyError, match="exited"):
        run_verify(script, root=_state(tmp_path))


def test_verify_reading_secrets_from_the_environment(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        """
        import os, pathlib
        seen = dict(os.environ)
        for p in pathlib.Path('/proc').glob('[0-9]*/environ'):
            try: seen[str(p)] = p.read_bytes().decode(errors='replace')
            except OSError: pass
        print('{"detail": %r}' % repr(seen).replace('"', ''))
        """,
    )
    with bounded(60):
        res = run_verify(script, root=_state(tmp_path))
    assert CANARY not in res.detail and "PATH" in res.detail


def test_verify_writing_the_final_state_it_checks(tmp_path: Path) -> None:
    root = _state(tmp_path)
    script = _script(
        tmp_path,
        """
        import argparse, pathlib, sys
        ap = argparse.ArgumentParser(); ap.add_argument('--root'); root = ap.parse_args().root
        try:
            (pathlib.Path(root) / 'out.txt').write_text('rewritten')
            print('wrote')
        except OSError as e:
            print('refused', e.strerror)
        sys.exit(0)
        """,
    )
    with bounded(60):
        res = run_verify(script, root=root)
    assert (
        res.detail.startswith("refused") and (root / "out.txt").read_text() == "the agent's work\n"
    )


def test_verify_writing_a_host_file(tmp_path: Path) -> None:
    # its own task directory is read-only; any other path lands in the sandbox's private /tmp
    own = tmp_path / "task" / "planted.txt"
    elsewhere = tmp_path / "planted.txt"
    script = _script(
        tmp_path,
        f"""
        out = []
        for path in ({str(own)!r}, {str(elsewhere)!r}):
            try:
                open(path, 'w').write('x'); out.append('wrote')
            except OSError as e:
                out.append('refused ' + e.strerror)
        print(out)
        """,
    )
    with bounded(60):
        res = run_verify(script, root=_state(tmp_path))
    assert not own.exists() and not elsewhere.exists()
    assert res.detail.startswith("['refused Read-only file system'")


def test_verify_phoning_home(tmp_path: Path) -> None:
    script = _script(
        tmp_path,
        """
        import socket
        try:
            socket.create_connection(('127.0.0.1', 5432), timeout=2); print('connected')
        except OSError as e:
            print('blocked', e.strerror)
        """,
    )
    with bounded(60):
        res = run_verify(script, root=_state(tmp_path))
    assert res.detail.startswith("blocked")


def test_verify_flooding_its_output(tmp_path: Path) -> None:
    script = _script(
        tmp_path, "import sys\nsys.stdout.write('x' * (200 << 20))\nprint()\nprint('last')\n"
    )
    # past the checks' 64 MiB file-size limit the write fails: a crash, not a label
    with bounded(90, mb=300), pytest.raises(VerifyError, match=r"crashed.*File too large"):
        run_verify(script, root=_state(tmp_path))


def test_verify_crashing_is_not_a_fail_label(tmp_path: Path) -> None:
    # Python exits 1 on an uncaught exception, the code that means "fail"
    script = _script(tmp_path, "raise KeyError('the check itself is broken')\n")
    with bounded(60), pytest.raises(VerifyError, match=r"crashed.*KeyError"):
        run_verify(script, root=_state(tmp_path))


def _hook(tmp_path: Path, body: str, timeout_s: float = 10) -> tuple[HookSpec, Path]:
    check = _script(tmp_path, body, "check.py")
    return HookSpec(after_tool="write_file", check="check.py", timeout_s=timeout_s), check.parent


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ('print("[1, 2, 3]")', "unexpected shape"),
        ('print(\'{"ok": "yes", "diagnosis": "fine"}\')', "unexpected shape"),
        ('print("null")', "unexpected shape"),
        ('print("definitely not json")', "not JSON"),
    ],
    ids=["json-list", "ok-as-string", "json-null", "not-json"],
)
def test_hook_answering_in_the_wrong_shape(tmp_path: Path, answer: str, why: str) -> None:
    spec, task_dir = _hook(tmp_path, answer)
    with bounded(60):
        [res] = run_hooks([spec], "write_file", task_dir, _state(tmp_path), sandbox=get_sandbox())
    assert not res.ok and why in res.diagnosis


def test_hook_hanging(tmp_path: Path) -> None:
    spec, task_dir = _hook(tmp_path, "import time\ntime.sleep(600)\n", timeout_s=2)
    with bounded(30):
        [res] = run_hooks([spec], "write_file", task_dir, _state(tmp_path), sandbox=get_sandbox())
    assert not res.ok and "timed out" in res.diagnosis


def test_hook_rewriting_the_workspace_it_checks(tmp_path: Path) -> None:
    root = _state(tmp_path)
    spec, task_dir = _hook(
        tmp_path,
        """
        import argparse, json, pathlib
        ap = argparse.ArgumentParser(); ap.add_argument('--root'); root = ap.parse_args().root
        try:
            (pathlib.Path(root) / 'out.txt').write_text('hook wrote this'); d = 'wrote'
        except OSError as e:
            d = 'refused ' + e.strerror
        print(json.dumps({"ok": True, "diagnosis": d, "next_action": ""}))
        """,
    )
    with bounded(60):
        [res] = run_hooks([spec], "write_file", task_dir, root, sandbox=get_sandbox())
    assert res.diagnosis.startswith("refused") and (root / "out.txt").read_text().startswith("the")
