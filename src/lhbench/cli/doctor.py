"""``lhbench doctor``: what this machine offers lhbench, checked by doing it."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from lhbench.cli.common import JsonOption, dump_json, say, settings_for
from lhbench.errors import LhbenchError

if TYPE_CHECKING:
    from lhbench.sandbox import Sandbox

__all__ = ["doctor", "register"]


def _self_test() -> list[tuple[str, bool, str]]:
    """Run a few hostile commands in the sandbox and report what each could do."""
    from lhbench.jobs import sandbox_for
    from lhbench.sandbox import Limits, lhbench_paths, policy_for, run_sandboxed_sync

    sandbox = sandbox_for(settings_for())
    results: list[tuple[str, bool, str]] = []
    canary = "LHBENCH_DOCTOR_CANARY_TOKEN"
    with (
        tempfile.TemporaryDirectory(prefix="lhbench-doctor-") as tmp,
        tempfile.TemporaryDirectory(prefix="lhbench-doctor-host-") as host,
    ):
        work = Path(tmp)
        secret = Path(host) / "secret.txt"
        secret.write_text("host file")
        os.environ[canary] = "host secret"
        try:
            policy = policy_for(work, writable=[work], limits=Limits(wall_s=20, cpu_s=20))
        finally:
            del os.environ[canary]

        def check(name: str, code: str, ok_when: str) -> None:
            done = run_sandboxed_sync(sandbox, [sys.executable, "-c", code], policy)
            got = done.text().strip()
            results.append((name, got == ok_when, got or done.text("stderr").strip()[-200:]))

        check(
            "runs Python in the workspace",
            f"import os; print(os.getcwd() == {str(work)!r})",
            "True",
        )
        check("cannot read /etc/shadow", "import os; print(os.path.exists('/etc/shadow'))", "False")
        check(
            "cannot see host files outside the workspace",
            f"import os; print(os.path.exists({str(secret)!r}))",
            "False",
        )
        home = Path.home()
        needed = sorted(  # lhbench's own Python may live under the home (uv, pyenv)
            {p.relative_to(home).parts[0] for p in lhbench_paths() if p.is_relative_to(home)}
        )
        check(
            "sees nothing of the host's home but lhbench's Python",
            f"import os; h = {str(home)!r}\n"
            "print(sorted(os.listdir(h)) if os.path.isdir(h) else [])",
            repr(needed) if home.is_dir() else "[]",
        )
        check(
            "has no network",
            "import socket\n"
            "try:\n socket.create_connection(('1.1.1.1', 53), timeout=2); print('open')\n"
            "except OSError: print('closed')",
            "closed",
        )
        check(
            "does not inherit the environment",
            f"import os; print({canary!r} in os.environ)",
            "False",
        )
        check(
            "cannot change a kernel setting (/proc/sys)",
            _SYSCTL_PROBE,
            "denied",
        )
        check(
            "sees its own PID 1, not the host's root through /proc/1/root",
            "import os\n"
            "try:\n seen = sorted(os.listdir('/proc/1/root'))\n"
            "except OSError:\n seen = sorted(os.listdir('/'))\n"
            "print(seen == sorted(os.listdir('/')) and not os.path.exists('/boot'))",
            "True",
        )
        check(
            "seccomp denies ptrace, keyrings, mount, bpf, perf, userfaultfd, modules, kexec",
            _SECCOMP_PROBE,
            "denied",
        )
        results.append(_host_identity(sandbox, work))
        results.append(_disk_limit(sandbox, work))
    return results


def _by_environment(needs: list[Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in needs:
        out.setdefault(r.environment, []).append(r.as_dict())
    return out


# the value read is written back: where the write goes through, nothing changes
_SYSCTL_PROBE = (
    "p = '/proc/sys/kernel/core_uses_pid'\n"
    "v = open(p).read()\n"
    "try:\n    open(p, 'w').write(v); print('written')\n"
    "except OSError:\n    print('denied')\n"
)
_SECCOMP_PROBE = (
    "import ctypes, os\n"
    "calls = {'x86_64': [(101, 16, 999999, 0, 0), (250, 0, -3, 0), (165, b'none', b'/none', "
    "b'tmpfs', 0, 0), (321, 0, 0, 0), (298, 0, 0, -1, -1, 0), (323, 1), (313, -1, b'', 0), "
    "(320, -1, -1, 0, 0, 0)]}.get(os.uname().machine)\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "bad = []\n"
    "for c in calls or []:\n"
    "    ctypes.set_errno(0)\n"
    "    if libc.syscall(*c) != -1 or ctypes.get_errno() != 1: bad.append(c[0])\n"
    "print('denied' if calls and not bad else 'allowed: %s' % (bad or 'unknown machine'))\n"
)


def _host_identity(sandbox: Sandbox, work: Path) -> tuple[str, bool, str]:
    """Which uid the host's kernel sees for a sandboxed process (never root)."""
    import threading
    import time

    from lhbench.sandbox import Limits, policy_for, run_sandboxed_sync

    marker = f"lhbench-doctor-identity-{os.getpid()}"
    policy = policy_for(work, limits=Limits(wall_s=20, cpu_s=20))
    runner = threading.Thread(
        target=run_sandboxed_sync,
        args=(sandbox, ["/bin/sh", "-c", f"sleep 2 # {marker}"], policy),
    )
    runner.start()
    uids: set[int] = set()
    try:
        for _ in range(100):
            for entry in os.listdir("/proc"):
                try:
                    cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
                    status = Path(f"/proc/{entry}/status").read_text()
                except OSError:
                    continue
                if marker.encode() in cmd and b"bwrap" not in cmd and entry != str(os.getpid()):
                    line = next(x for x in status.splitlines() if x.startswith("Uid:"))
                    uids |= {int(u) for u in line.split()[1:]}
            if uids:
                break
            time.sleep(0.05)
    finally:
        runner.join()
    ok = bool(uids) and 0 not in uids
    return ("is not root on the host (uid the host's kernel sees)", ok, str(sorted(uids)))


def _disk_limit(sandbox: Sandbox, work: Path) -> tuple[str, bool, str]:
    """A command writing past its disk limit is stopped, and says so."""
    from lhbench.sandbox import Limits, policy_for, run_sandboxed_sync

    policy = policy_for(work, writable=[work], limits=Limits(wall_s=30, cpu_s=30, disk_mb=8))
    fill = "i=0; while [ $i -lt 100 ]; do head -c 1M /dev/zero > f$i; i=$((i+1)); sleep 0.02; done"
    done = run_sandboxed_sync(sandbox, ["/bin/sh", "-c", fill + "; echo all-written"], policy)
    ok = done.disk_limit is not None and "all-written" not in done.text()
    return ("is stopped at its disk limit", ok, str(done.disk_limit or done.text()[-100:]))


def doctor(
    self_test: Annotated[
        bool, typer.Option("--self-test/--no-self-test", help="Probe the sandbox by using it.")
    ] = True,
    postgres: Annotated[
        str | None,
        typer.Option(
            help="Probe this PostgreSQL server (admin URL) and the gate in front of it; "
            "defaults to aj_postgres_url."
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Say which sandbox lhbench would use here, what it confines, and what else is installed.

    Lists what each environment (Figma, content, GUI, CLI harnesses) needs at run time and
    whether it is here, with the line that installs what is missing.

    Exit code 1 when no sandbox works (then runs need --unsafe-no-sandbox) or a probe fails.
    Example: lhbench doctor
    """
    from lhbench.jobs import sandbox_for
    from lhbench.sandbox.select import candidates_report

    settings = settings_for()
    name: str | None = None
    describe: list[str] = []
    error: str | None = None
    try:
        sandbox = sandbox_for(settings)
        name, describe = sandbox.name, sandbox.describe()
    except LhbenchError as exc:
        error = str(exc)
    backends = candidates_report(settings.sandbox_image)
    programs = {
        p: shutil.which(p) is not None
        for p in ("bwrap", "prlimit", "docker", "podman", "node", "npm")
    }
    programs["chromium"] = any(
        shutil.which(p) for p in ("chromium-headless-shell", "chromium", "chromium-browser")
    )
    # LibreOffice renders the GUI domain's office documents for the judge (aj-gui-mini)
    from lhbench.envs.gui.render import soffice_binary

    programs["soffice"] = soffice_binary() is not None
    from lhbench.jobs.requirements import environment_requirements

    needs = environment_requirements()
    probes = _self_test() if name and self_test else []
    pg_url = postgres or settings.aj_postgres_url
    if pg_url:
        from lhbench.cli.doctor_postgres import postgres_probes

        probes += postgres_probes(pg_url)
    ok = name is not None and all(good for _, good, _ in probes)
    if as_json:
        dump_json(
            {
                "sandbox_setting": settings.sandbox,
                "sandbox": name,
                "describe": describe,
                "error": error,
                "backends": backends,
                "programs": programs,
                "environments": _by_environment(needs),
                "self_test": [{"check": c, "ok": good, "saw": saw} for c, good, saw in probes],
                "ok": ok,
            }
        )
    else:
        if name:
            say(f"sandbox: {name}", style="bold" if name != "none" else "bold red")
            for line in describe:
                say(f"  {line}")
        else:
            say(f"sandbox: none works: {error}", style="bold red")
        for backend, why in backends.items():
            say(f"  {backend}: {'works' if why is None else why}")
        for check, good, saw in probes:
            say(f"  [{'ok  ' if good else 'FAIL'}] {check}" + ("" if good else f" (saw: {saw})"))
        if pg_url and not self_test:
            say("  (PostgreSQL probes ran without the sandbox self-test)")
        say("programs: " + ", ".join(f"{k}={'yes' if v else 'no'}" for k, v in programs.items()))
        say("environments (what each needs at run time; a missing one is an error, no score):")
        for env, reqs in _by_environment(needs).items():
            say(
                f"  {env}: "
                + ", ".join(f"{r['name']} {'yes' if r['present'] else 'NO'}" for r in reqs)
            )
            for r in reqs:
                if not r["present"]:
                    say(f"    {r['name']} (for {r['needed_for']}): {r['install']}", style="yellow")
    if not ok:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add the command."""
    app.command()(doctor)
