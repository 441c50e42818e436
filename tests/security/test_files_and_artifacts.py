"""The agent's file tools and what the run keeps of its workspace (artifacts).

The agent prepares a trap with its shell (a link to a host file, a FIFO, a socket, a
huge file), then uses its file tools or simply ends the run and lets lhbench collect
the workspace.
"""

from __future__ import annotations

from pathlib import Path

from lhbench.harness.artifacts import MAX_ARTIFACT_BYTES, MAX_ARTIFACTS
from tests.security.helpers import CANARY, agent_run, bounded


def _secret(tmp_path: Path) -> Path:
    secret = tmp_path / "host" / "session-secret"
    secret.parent.mkdir()
    secret.write_text(CANARY)
    return secret


def test_reading_a_host_file_through_a_link_it_made(tmp_path: Path) -> None:
    secret = _secret(tmp_path)
    with bounded(60):
        outs, _, _ = agent_run(
            tmp_path,
            [
                ("run_shell", {"command": f"ln -s {secret} leak; ln -s /etc/passwd pw"}),
                ("read_file", {"path": "leak"}),
                ("read_file", {"path": "pw"}),
            ],
        )
    assert all(CANARY not in o and "root:" not in o for o in outs)
    assert "symlink" in outs[1] and "symlink" in outs[2]


def test_writing_through_a_linked_directory(tmp_path: Path) -> None:
    target = tmp_path / "host"
    target.mkdir()
    with bounded(60):
        outs, _, _ = agent_run(
            tmp_path,
            [
                ("run_shell", {"command": f"ln -s {target} d"}),
                ("write_file", {"path": "d/planted.txt", "content": "pwned"}),
                ("edit_file", {"path": "d/planted.txt", "old_text": "a", "new_text": "b"}),
            ],
        )
    assert not (target / "planted.txt").exists()
    assert "refused" in outs[1] and "symlink" in outs[1]


def test_listing_a_linked_host_directory(tmp_path: Path) -> None:
    _secret(tmp_path)
    with bounded(60):
        outs, _, _ = agent_run(
            tmp_path,
            [
                ("run_shell", {"command": f"ln -s {tmp_path / 'host'} h"}),
                ("list_dir", {"path": "h"}),
            ],
        )
    assert "refused" in outs[1] and "session-secret" not in outs[1]


def test_reading_a_fifo_with_the_file_tool(tmp_path: Path) -> None:
    with bounded(60):
        outs, _, _ = agent_run(
            tmp_path,
            [("run_shell", {"command": "mkfifo pipe"}), ("read_file", {"path": "pipe"})],
        )
    assert "refused" in outs[1] and "not a regular file" in outs[1]


def test_collecting_artifacts_with_a_link_to_a_host_secret(tmp_path: Path) -> None:
    secret = _secret(tmp_path)
    with bounded(60):
        _, out, _ = agent_run(
            tmp_path,
            [
                (
                    "run_shell",
                    {
                        "command": f"ln -s {secret} secret.txt; ln -s /etc/shadow shadow; "
                        f"mkdir d; ln -s {secret.parent} d/host"
                    },
                )
            ],
        )
    by_name = {a.name: a for a in out.artifacts}
    assert all(CANARY.encode() not in (a.content or b"") for a in out.artifacts)
    for name in ("secret.txt", "shadow", "d/host"):
        assert by_name[name].status == "omitted" and "symbolic link" in (by_name[name].note or "")


def test_collecting_artifacts_with_a_fifo_and_a_socket(tmp_path: Path) -> None:
    with bounded(60):
        _, out, _ = agent_run(
            tmp_path,
            [
                (
                    "run_shell",
                    {
                        "command": 'mkfifo pipe; python3 -c "import socket; '
                        "socket.socket(socket.AF_UNIX).bind('sock')\""
                    },
                )
            ],
        )
    by_name = {a.name: a for a in out.artifacts}
    assert by_name["pipe"].status == "omitted" and by_name["sock"].status == "omitted"
    assert "not a regular file" in (by_name["pipe"].note or "")


def test_artifacts_past_the_size_and_count_limits_are_kept_and_marked(tmp_path: Path) -> None:
    many = MAX_ARTIFACTS + 20
    with bounded(90):
        _, out, _ = agent_run(
            tmp_path,
            [
                (
                    "run_shell",
                    {
                        "command": f"head -c {3 * MAX_ARTIFACT_BYTES} /dev/urandom > big.bin; "
                        f"mkdir many; for i in $(seq 1 {many}); do echo $i > many/f$i.txt; done"
                    },
                )
            ],
        )
    by_name = {a.name: a for a in out.artifacts}
    big = by_name["big.bin"]
    assert big.status == "truncated" and big.size == 3 * MAX_ARTIFACT_BYTES
    assert len(big.content or b"") == MAX_ARTIFACT_BYTES and "truncated" in (big.note or "")
    listed = [a for a in out.artifacts if a.name.startswith("many/")]
    assert len(listed) == many  # every file named, none dropped
    omitted = [a for a in listed if a.status == "omitted"]
    assert omitted and all("limit" in (a.note or "") for a in omitted)
