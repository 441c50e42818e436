"""The host's kernel and identity, from inside the sandbox (issue 27, items 1-3 and seccomp).

lhbench often runs as root (CI, containers). These cases check that a sandboxed process
is not root on the host, cannot change a kernel setting through ``/proc/sys`` (or reach
``/proc/sysrq-trigger`` and friends), sees its own ``/proc/1``, and cannot make the
system calls the seccomp filter denies. The suite runs as root (CI) and as an
unprivileged user (``make test-unprivileged``); every case holds in both.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest

from lhbench.sandbox import Limits, get_sandbox, policy_for, run_sandboxed_sync
from tests.security.helpers import bounded, processes_with, shell

# kernel settings the attack suite wrote from the agent's shell (the value read is
# written back, so on a machine where the write goes through nothing changes)
SYSCTLS = (
    "kernel/core_pattern",
    "kernel/core_uses_pid",
    "vm/overcommit_memory",
    "kernel/pid_max",
    "fs/file-max",
)
# must not even be writable (never written: /proc/sysrq-trigger would act)
UNWRITABLE = ("/proc/sysrq-trigger", "/proc/irq/default_smp_affinity", "/proc/sys/kernel/modprobe")


def _write_back(path: str) -> str:
    return f"v=$(cat {path}) && printf '%s\\n' \"$v\" > {path} 2>/dev/null && echo WROTE:{path}; "


def test_writing_host_kernel_settings_through_proc_sys(tmp_path: Path) -> None:
    before = {s: Path("/proc/sys", s).read_text() for s in SYSCTLS}
    probe = "".join(_write_back(f"/proc/sys/{s}") for s in SYSCTLS)
    probe += "".join(f"[ -w {p} ] && echo WRITABLE:{p}; " for p in UNWRITABLE)
    with bounded(60):
        [out], _ = shell(tmp_path, probe + "echo end")
    assert "end" in out
    assert "WROTE" not in out and "WRITABLE" not in out, out
    assert {s: Path("/proc/sys", s).read_text() for s in SYSCTLS} == before


def test_the_sandbox_is_not_root_on_the_host(tmp_path: Path) -> None:
    # what the host's kernel sees: the uid of the sandboxed process, from outside
    marker = f"lhb-identity-51c-{uuid.uuid4().hex[:8]}"  # this run's own (suites may run at once)
    done: list[object] = []
    t = threading.Thread(
        target=lambda: done.append(
            run_sandboxed_sync(
                get_sandbox(),
                ["/bin/sh", "-c", f"sleep 3 # {marker}"],
                policy_for(tmp_path, limits=Limits(wall_s=20)),
            )
        )
    )
    t.start()
    try:
        uids: set[int] = set()
        for _ in range(100):
            for pid in processes_with(marker):
                status = Path(f"/proc/{pid}/status").read_text()
                line = next(x for x in status.splitlines() if x.startswith("Uid:"))
                # the shell and its launcher; the sandboxed one runs `sleep`
                if "bwrap" not in Path(f"/proc/{pid}/cmdline").read_text():
                    uids |= {int(u) for u in line.split()[1:]}
            if uids:
                break
            time.sleep(0.05)
    finally:
        t.join()
    assert uids, "the sandboxed process was not found"
    assert 0 not in uids
    if os.geteuid() != 0:
        assert uids == {os.geteuid()}  # unprivileged: the caller's own uid, nothing more


def test_files_the_sandbox_writes_stay_the_harness_s(tmp_path: Path) -> None:
    # the workspace is writable from inside, and what is written there is the host user's
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "given.txt").write_text("from the harness\n")
    done = run_sandboxed_sync(
        get_sandbox(),
        ["/bin/sh", "-c", "echo more >> given.txt && mkdir d && echo new > d/made.txt && id -u"],
        policy_for(ws, writable=[ws], limits=Limits(wall_s=20)),
    )
    assert done.returncode == 0, done.text("stderr")
    assert (ws / "given.txt").read_text() == "from the harness\nmore\n"
    made = ws / "d" / "made.txt"
    assert made.read_text() == "new\n"
    assert made.stat().st_uid == os.geteuid() and (ws / "d").stat().st_uid == os.geteuid()


def test_listing_proc_1_root(tmp_path: Path) -> None:
    # /proc/1 is the sandbox's own first process: its root is the sandbox's root
    with bounded(60):
        [out], _ = shell(
            tmp_path, "ls -A /proc/1/root 2>&1; echo ==; ls -A /; echo ==; cat /proc/1/comm"
        )
    listed, root, comm = out.split("\n", 1)[1].split("==\n")[:3]
    host_only = set(os.listdir("/")) - set(root.split())  # /var, /home, /boot, ...
    assert host_only and not host_only & set(listed.split())
    assert "Permission denied" in listed or sorted(listed.split()) == sorted(root.split())
    assert comm.strip() == "bwrap"  # the sandbox's own init, not the host's


def test_the_office_renderer_runs_in_the_same_sandbox(tmp_path: Path) -> None:
    # whatever a document makes LibreOffice do (a macro), it does it with the renderer's
    # sandbox: that sandbox, exactly as the renderer asks for it, cannot write a sysctl
    from lhbench.envs.gui.render import RenderError, render_document, soffice_binary

    if soffice_binary() is None:
        pytest.skip("LibreOffice is not installed (scripts/system-deps installs it)")
    real = get_sandbox()
    seen: list[object] = []

    class Recording:
        name = real.name

        def available(self) -> str | None:
            return real.available()

        def describe(self) -> list[str]:
            return real.describe()

        def prepare(self, argv, policy):  # type: ignore[no-untyped-def]
            seen.append(policy)
            probe = "".join(_write_back(f"/proc/sys/{s}") for s in SYSCTLS) + "id -u; echo end"
            return real.prepare(["/bin/sh", "-c", probe], policy)

    doc = tmp_path / "macro.docx"
    doc.write_bytes(b"PK\x03\x04 not really a document")
    with pytest.raises(RenderError) as err:
        render_document(doc, tmp_path / "out", sandbox=Recording())
    assert len(seen) == 1 and "end" in str(err.value) and "WROTE" not in str(err.value)


# each call with arguments that are harmless where it is allowed (a missing process, a
# null pointer, a missing path), so where the filter is missing it answers something else
_DENIED_CALLS: dict[str, dict[str, tuple[int | bytes, ...]]] = {
    "x86_64": {
        "ptrace": (101, 16, 999999, 0, 0),  # PTRACE_ATTACH to no process: ESRCH
        "process_vm_readv": (310, 999999, 0, 0, 0, 0, 0),
        "keyctl": (250, 0, -3, 0),  # KEYCTL_GET_KEYRING_ID of the session keyring
        "add_key": (248, b"user", b"lhb", b"x", 1, -3),
        "request_key": (249, b"user", b"lhb-none", 0, 0),
        "mount": (165, b"none", b"/nonexistent", b"tmpfs", 0, 0),
        "umount2": (166, b"/nonexistent", 0),
        "pivot_root": (155, b"/nonexistent", b"/nonexistent"),
        "open_tree": (428, -100, b"/nonexistent", 0),
        "fsopen": (430, b"nosuchfs", 0),
        "bpf": (321, 0, 0, 0),
        "perf_event_open": (298, 0, 0, -1, -1, 0),
        "userfaultfd": (323, 1),  # UFFD_USER_MODE_ONLY: allowed to anyone without the filter
        "init_module": (175, 0, 0, 0),
        "finit_module": (313, -1, b"", 0),
        "delete_module": (176, b"lhb_none", 0),
        "kexec_load": (246, 0, 0, 0, 0),
        "kexec_file_load": (320, -1, -1, 0, 0, 0),
    }
}


@pytest.mark.skipif(
    os.uname().machine not in _DENIED_CALLS, reason="system call numbers known for x86_64 here"
)
def test_the_seccomp_filter_denies_what_a_sandbox_never_needs(tmp_path: Path) -> None:
    calls = _DENIED_CALLS[os.uname().machine]
    probe = (
        "import ctypes\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "libc.syscall.restype = ctypes.c_long\n"
        f"for name, args in {calls!r}.items():\n"
        "    ctypes.set_errno(0)\n"
        "    r = libc.syscall(*args)\n"
        "    print(name, r, ctypes.get_errno())\n"
    )
    done = run_sandboxed_sync(
        get_sandbox(), [sys.executable, "-I", "-c", probe], policy_for(tmp_path)
    )
    answers = {
        line.split()[0]: (int(line.split()[1]), int(line.split()[2]))
        for line in done.text().splitlines()
    }
    assert set(answers) == set(calls), done.text("stderr")
    allowed = {name: a for name, a in answers.items() if a != (-1, 1)}  # EPERM
    assert allowed == {}, f"not denied (result, errno): {allowed}"
    # an ordinary call still works under the filter
    ok = run_sandboxed_sync(get_sandbox(), ["/bin/sh", "-c", "echo fine"], policy_for(tmp_path))
    assert ok.text().strip() == "fine"


def test_making_a_set_uid_file_in_the_workspace(tmp_path: Path) -> None:
    # what the sandbox writes is the host user's (root's, when lhbench runs as root): a
    # set-uid copy of a shell there would be a root shell for whoever could reach it
    ws = tmp_path / "ws"
    ws.mkdir()
    probe = (
        "cp /bin/sh ./sh; chmod u+s ./sh; chmod g+s ./sh; "
        "install -m 4755 /bin/sh ./sh2; "
        "python3 -c \"import os; os.close(os.open('sh3', os.O_CREAT | os.O_WRONLY, 0o6755))\"; "
        "echo end"
    )
    done = run_sandboxed_sync(
        get_sandbox(), ["/bin/sh", "-c", probe], policy_for(ws, writable=[ws])
    )
    assert "end" in done.text()
    setid = [p.name for p in ws.iterdir() if p.stat().st_mode & 0o6000]
    assert setid == [], done.text("stderr")
    assert (ws / "sh").exists()  # copying and ordinary modes still work


def test_the_seccomp_program_covers_every_listed_call() -> None:
    import struct

    from lhbench.sandbox.seccomp import seccomp_program

    prog = seccomp_program("x86_64")
    assert prog is not None and len(prog) % 8 == 0
    ins = [struct.unpack("=HBBI", prog[i : i + 8]) for i in range(0, len(prog), 8)]
    checked = {k for code, _, _, k in ins if code == 0x15}
    assert {101, 250, 165, 321, 298, 323, 175, 313, 176, 246, 320} <= checked
    assert seccomp_program("sparc") is None


@pytest.mark.skipif(os.geteuid() != 0, reason="the uid drop happens only when run as root")
def test_where_the_drop_is_impossible_the_sandbox_says_it_is_root(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import lhbench.sandbox.bubblewrap as bw

    monkeypatch.setattr(bw, "STAGE_DIR", "/proc/lhbench-no-such-stage")  # staging fails
    sb = bw.BubblewrapSandbox()
    assert sb.available() is None  # still a sandbox, confined as before
    assert not sb.drop_root and sb.no_drop and "launcher" in sb.no_drop
    assert any("ROOT on the host" in line for line in sb.describe())
