"""The session's worker: what it imports, and the pieces that stand in for json and shutil.

Every sandbox session starts a worker, so its imports are part of every replay's, hook
check's and verify's start. It imports only the C halves of json, signal and socket.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from lhbench.sandbox.worker import _clear, _encode, _load, _malformed, _send

WORKER = Path(__file__).parents[2] / "src" / "lhbench" / "sandbox" / "worker.py"


def test_the_worker_starts_without_the_modules_it_replaced(tmp_path: Path) -> None:
    host, inside = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    with host:
        proc = subprocess.Popen(
            [sys.executable, "-X", "importtime", "-I", "-S", str(WORKER), str(inside.fileno())],
            pass_fds=(inside.fileno(),),
            stderr=subprocess.PIPE,
            cwd=tmp_path,
        )
        inside.close()
        host.settimeout(30)
        hello = json.loads(host.recv(1 << 16))  # the host reads it with json, as a session does
        host.shutdown(socket.SHUT_RDWR)
        _, err = proc.communicate(timeout=30)
    assert hello["ready"] is True and hello["pid"] == proc.pid
    imported = {
        line.rsplit("|", 1)[1].strip()
        for line in err.decode().splitlines()
        if line.startswith("import time:") and "|" in line
    }
    assert {"ctypes", "_json", "_socket"} <= imported
    replaced = {"json", "re", "enum", "socket", "signal", "contextlib", "shutil", "typing"}
    assert not imported & replaced, sorted(imported & replaced)
    assert not {m for m in imported if m.startswith("lhbench")}


_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=20,
)


@given(_VALUES)
def test_a_reply_reads_back_as_json_reads_what_json_wrote(value: object) -> None:
    text = _encode(value)
    assert json.loads(text) == value
    assert text == json.dumps(value, separators=(",", ":"))


def test_a_reply_never_holds_what_json_cannot_read() -> None:
    # a command's usage can hold no infinity, but if one came it must not break the reply
    assert json.loads(_encode({"seconds": float("inf"), "x": float("nan")})) == {
        "seconds": None,
        "x": None,
    }
    for bad in (b"bytes", [1], (1,), {1, 2}, object()):
        try:
            _encode(bad)
        except TypeError:
            continue
        raise AssertionError(f"{bad!r} was encoded")
    # a command's error text is anything: quotes, controls, surrogates, newlines
    nasty = 'a"b\\c\n\x00\u2028\ud800'
    assert json.loads(_encode({"error": nasty})) == {"error": nasty}


@given(st.dictionaries(st.text(), _VALUES, max_size=5))
def test_a_request_reads_as_json_loads_reads_it(req: dict[str, object]) -> None:
    assert _load(json.dumps(req).encode()) == req
    assert _load(json.dumps(req, ensure_ascii=False).encode()) == req


def test_a_request_that_is_not_one_is_none() -> None:
    assert _load(b'{"argv": ["true"], "id": "x"}') == {"argv": ["true"], "id": "x"}
    bad = [b"", b"\x00", b"garbage", b"[1, 2]", b'"argv"', b'{"a": 1} {"b": 2}', b'{"a":']
    bad += [b'{"a": NaN}', b'{"a": Infinity}', b"\xff\xfe", b"[" * 100_000, b'{"a": 1}x']
    for msg in bad:
        assert _load(msg) is None, msg[:40]


def test_clearing_a_scratch_directory_never_follows_a_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "keep.txt").write_text("keep")
    (outside / "sub" / "deep.txt").write_text("keep")
    scratch = tmp_path / "scratch"
    deep = scratch
    for i in range(300):  # deeper than a recursive walk would like
        deep = deep / f"d{i % 3}"
    deep.mkdir(parents=True)
    (deep / "f").write_text("x")
    (scratch / "file").write_text("x")
    (scratch / "to-dir").symlink_to(outside)
    (scratch / "to-file").symlink_to(outside / "keep.txt")
    (scratch / "dangling").symlink_to(tmp_path / "nowhere")
    os.mkfifo(scratch / "fifo")
    _clear(str(scratch))
    assert not scratch.exists()
    assert (outside / "keep.txt").read_text() == "keep"
    assert (outside / "sub" / "deep.txt").read_text() == "keep"
    _clear(str(scratch))  # gone already: nothing to do, nothing raised


def _as_unprivileged(fn: Callable[[], bool]) -> bool:
    """``fn()`` in a child that is not root (root reads a directory whatever its mode)."""
    if os.geteuid() != 0:
        return fn()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            os._exit(0 if fn() else 1)
        finally:
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 0


@contextmanager
def _scratch_base() -> Iterator[Path]:
    """A directory outside pytest's ``tmp_path`` (whose clean-up a tree left here would
    break), removed whatever is left in it: any depth, any mode."""
    base = Path(tempfile.mkdtemp(prefix="lhbench-clear-", dir="/tmp"))
    base.chmod(0o777)
    try:
        yield base
    finally:
        subprocess.run(["rm", "-rf", str(base)], check=False)  # GNU rm: any depth
        if base.exists():  # not root: directories without rights stopped rm
            with suppress(OSError, RecursionError):
                for d, _, _ in os.walk(base):
                    os.chmod(d, 0o700)
            subprocess.run(["rm", "-rf", str(base)], check=False)


def _clears_as_its_owner(scratch: Path, lock: Callable[[], None]) -> bool:
    """Whether ``_clear`` removes ``scratch`` after ``lock()`` took rights away, run as a
    uid that owns the tree and is not root."""
    if os.geteuid() == 0:
        for d, dirs, files in os.walk(scratch):
            for name in [*dirs, *files]:
                os.lchown(Path(d) / name, 65534, 65534)
        os.lchown(scratch, 65534, 65534)
    lock()

    def cleared() -> bool:
        _clear(str(scratch))
        return not os.path.lexists(scratch)

    return _as_unprivileged(cleared)


def test_clearing_gives_back_the_rights_a_command_took_from_its_own_directories() -> None:
    with _scratch_base() as base:
        scratch = base / "scratch"
        locked = scratch / "locked"
        (locked / "inner").mkdir(parents=True)
        (locked / "inner" / "f").write_text("x")
        (scratch / "f").write_text("x")

        def lock() -> None:
            (locked / "inner").chmod(0)
            locked.chmod(0)

        assert _clears_as_its_owner(scratch, lock)


def _deep(top: Path, name: str, levels: int) -> None:
    fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(levels):
        os.mkdir(name, dir_fd=fd)
        inner = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(os.open("f", os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=fd))
    os.close(fd)


def test_clearing_a_tree_deeper_than_path_max_or_any_recursion() -> None:
    with _scratch_base() as base:
        scratch = base / "scratch"
        (scratch / "long").mkdir(parents=True)
        (scratch / "many").mkdir()
        _deep(scratch / "long", "d" * 250, 17)  # 4,250 bytes of path
        _deep(scratch / "many", "a", 2100)
        # the name the clearing moves directories up to, taken by the command beforehand
        (scratch / ".lhbench-clear-1" / "x").mkdir(parents=True)
        _clear(str(scratch))
        assert not os.path.lexists(scratch)


def test_clearing_read_only_trees_and_a_read_only_scratch_directory() -> None:
    modes = (0o500, 0o400, 0o100, 0o000)
    with _scratch_base() as base:
        scratch = base / "scratch"
        for mode in modes:
            d = scratch / f"ro{mode:o}" / "inner"
            d.mkdir(parents=True)
            (d / "f").write_text("x")
        (scratch / "f").write_text("x")

        def lock() -> None:
            for mode in modes:
                (scratch / f"ro{mode:o}" / "inner").chmod(mode)
                (scratch / f"ro{mode:o}").chmod(mode)
            scratch.chmod(0o500)

        assert _clears_as_its_owner(scratch, lock)


class _Sent:
    def __init__(self) -> None:
        self.messages: list[bytes] = []

    def send(self, data: bytes) -> int:
        self.messages.append(data)
        return len(data)


def test_a_reply_that_cannot_be_written_says_so_and_the_worker_goes_on() -> None:
    sent = _Sent()
    _send(sent, {"id": "abc", "usage": {"x": b"bytes"}})  # type: ignore[arg-type]
    _send(sent, {"id": ["not", "a", "string"], "returncode": 0})  # type: ignore[arg-type]
    nested: dict[str, object] = {}
    for _ in range(100_000):
        nested = {"k": nested}
    _send(sent, {"id": "deep", "x": nested})  # type: ignore[arg-type]
    replies = [json.loads(m) for m in sent.messages]
    assert [r["id"] for r in replies] == ["abc", None, "deep"]
    assert "TypeError" in replies[0]["error"] and "TypeError" in replies[1]["error"]
    assert "RecursionError" in replies[2]["error"]


def test_a_request_that_cannot_be_run_is_answered_with_why() -> None:
    assert _malformed({"id": "n", "argv": ["/bin/true"]}) is None
    assert _malformed({"id": ["n"], "argv": ["/bin/true"]}) == "a request's id must be a string"
    for argv in ([], "/bin/true", [1], ["/bin/true", None]):
        assert _malformed({"id": "n", "argv": argv}) == "a request's argv must be a list of strings"
