"""``lhbench doctor``: what this machine offers lhbench, checked by doing it."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Annotated, Any

import typer

from lhbench.cli.common import JsonOption, dump_json, say, settings_for
from lhbench.errors import LhbenchError

__all__ = ["doctor", "register"]


def _self_test() -> list[tuple[str, bool, str]]:
    """Run a few hostile commands in the sandbox and report what each could do."""
    from lhbench.jobs.api import sandbox_for
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
    return results


def _by_environment(needs: list[Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in needs:
        out.setdefault(r.environment, []).append(r.as_dict())
    return out


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
    from lhbench.jobs.api import sandbox_for
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
    from lhbench.envs.requirements import environment_requirements

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
