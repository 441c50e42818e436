"""A small pack for harness tests: one task with a verification hook and a skill."""

from __future__ import annotations

import textwrap
from pathlib import Path

CHECK = textwrap.dedent(
    """
    import argparse, json, sys
    from pathlib import Path
    ap = argparse.ArgumentParser(); ap.add_argument("--root"); root = Path(ap.parse_args().root)
    p = root / "greeting.txt"
    text = p.read_text() if p.exists() else ""
    if text.strip() == "hello, world":
        print(json.dumps({"ok": True, "diagnosis": "greeting.txt is right", "next_action": ""}))
    else:
        diagnosis = f"greeting.txt says {text.strip()!r}; expected 'hello, world'"
        print(json.dumps({"ok": False, "diagnosis": diagnosis,
                          "next_action": "rewrite greeting.txt with exactly: hello, world"}))
        sys.exit(1)  # the exit code says what "ok" says
    """
)


HOOKS = (
    "  hooks:\n"
    "    - {after_tool: write_file, check: check.py}\n"
    "    - {after_tool: edit_file, check: check.py}\n"
)


# the judge's read-only file tools, served over stdio on the run's workspace
MCP_SERVERS = (
    "mcp_servers:\n"
    "  notes:\n"
    "    command: ['{python}', '-m', 'lhbench.tools', 'fs', '{workspace}']\n"
)


SLOW_MCP_SERVERS = (
    "mcp_servers:\n"
    "  notes:\n"
    "    command: ['{{python}}', '-c', 'import time, runpy, sys; time.sleep({delay}); "
    'sys.argv = ["lhbench.tools", "fs", sys.argv[1]]; '
    'runpy.run_module("lhbench.tools", run_name="__main__")\', \'{{workspace}}\']\n'
    "    startup_timeout_s: 90\n"
)


def write_harness_pack(
    root: Path,
    *,
    tool_calls: int | None = None,
    wall_seconds: float | None = None,
    hooks: bool = True,
    mcp: bool = False,
    turns: list[str] | None = None,
    mcp_delay_s: float = 0.0,
) -> Path:
    (root / "tasks" / "greet" / "initial").mkdir(parents=True)
    servers = MCP_SERVERS
    if mcp_delay_s:  # a server slow to start, as on a loaded machine; the pack allows for it
        servers = SLOW_MCP_SERVERS.format(delay=mcp_delay_s)
    (root / "pack.yaml").write_text(
        "id: harness-mini\nversion: '1'\nenvironment: filesystem\n" + (servers if mcp else "")
    )
    (root / "tasks" / "greet" / "initial" / "README.md").write_text("# project\n")
    (root / "tasks" / "greet" / "check.py").write_text(CHECK)
    limits = ""
    if tool_calls or wall_seconds:
        limits = (
            "limits:\n"
            + (f"  tool_calls: {tool_calls}\n" if tool_calls else "")
            + (f"  wall_seconds: {wall_seconds}\n" if wall_seconds else "")
        )
    (root / "tasks" / "greet" / "task.yaml").write_text(
        "title: Greet\n"
        + (
            "turns:\n" + "".join(f"  - {t!r}\n" for t in turns)
            if turns
            else "instruction: Write greeting.txt saying hello, world.\n"
        )
        + "environment:\n  initial_state: initial\n"
        + (HOOKS if hooks else "")
        + ("  mcp_servers: [notes]\n" if mcp else "")
        + "skills: [greeter]\n"
        + limits
    )
    skill = root / "skills" / "greeter"
    (skill / "versions").mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: greeter\ndescription: greets\n---\nSKILL-DEFAULT: check the manifest first.\n"
    )
    (skill / "versions" / "v1.md").write_text(
        "---\nname: greeter\n---\nSKILL-VARIANT-V1: be terse.\n"
    )
    return root
