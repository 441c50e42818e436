"""The CLI adapters: real agent CLIs as subprocesses, headless, in the run's workspace.

Each runs with stdin closed, its own home/config directory inside the run directory, its
temp files there too, no nonessential traffic, and the model's base URL from the model spec
(facts: ``shared/reference/cli-offline-probe.md``, ``agent-cli-formats.md``):

- Claude Code: ``claude -p PROMPT --output-format stream-json --verbose
  --dangerously-skip-permissions``; ``CLAUDE_CONFIG_DIR``, ``ANTHROPIC_BASE_URL``; skills in
  ``.claude/skills``; checks as ``PostToolUse``/``PostToolUseFailure`` hooks (``--settings``).
- Codex CLI: ``codex exec --json --skip-git-repo-check
  --dangerously-bypass-approvals-and-sandbox``; ``CODEX_HOME`` with a custom Responses-API
  model provider; skills inline in ``$CODEX_HOME/AGENTS.md``; checks as ``PostToolUse``
  hooks in ``$CODEX_HOME/hooks.json`` (trust-gated in exec, so the bypass flag is given).
- Gemini CLI: ``gemini -m MODEL -p PROMPT --output-format stream-json --yolo``;
  ``GEMINI_CLI_HOME`` with its settings (API-key auth, no usage statistics), and
  ``GOOGLE_GEMINI_BASE_URL``; skills in ``.gemini/skills``; checks as ``AfterTool`` hooks,
  whose ``additionalContext`` is appended to the tool result.

The hook command is :mod:`lhbench.harness.cli_hook`; its own log is read back after the run.
The CLI's stdout is the transcript, normalized by the matching importer.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from lhbench.envs.paths import (
    EscapeError,
    NotARegularFile,
    ensure_dir_beneath,
    open_beneath,
    replace_beneath,
)
from lhbench.errors import ConfigError, InfrastructureError
from lhbench.harness.cli_hook import hook_config
from lhbench.harness.workspace import Workspace
from lhbench.ingest import ImportContext, TranscriptInfo
from lhbench.ingest.claude_code import read_claude_code
from lhbench.ingest.codex import read_codex
from lhbench.ingest.gemini import read_gemini
from lhbench.models import ModelSpec
from lhbench.plugins import GROUPS, Registry, adapter
from lhbench.sandbox import Endpoint, Limits, Sandbox, policy_for, run_sandboxed
from lhbench.sandbox.proxy import PLACEHOLDER_KEY, KeyProxy
from lhbench.schema import HookSpec, McpServerSpec, Step

__all__ = [
    "CLI_AGENTS",
    "CliAgent",
    "CliNotInstalled",
    "CliRun",
    "cli_binary",
    "cli_version",
    "install_cli",
    "run_cli_agent",
]


class CliNotInstalled(ConfigError, InfrastructureError):
    """The CLI binary is not where it was looked for (exit 2, what to do; retried, no score)."""


@dataclass
class CliJob:
    """What a CLI's setup needs to know about one turn of one run.

    ``turn`` is 0-based; ``session`` is the CLI's session id once known (a later turn
    resumes it). ``checks_dir`` holds the task's hook checks, read-only in the sandbox.
    """

    ws: Workspace
    task_dir: Path
    prompt: str
    model: ModelSpec
    env: dict[str, str]
    hooks: list[HookSpec]
    skills: dict[str, str]
    mcp: dict[str, McpServerSpec] = field(default_factory=dict)
    turn: int = 0
    session: str | None = None
    checks_dir: Path | None = None

    def mcp_argv(self) -> dict[str, list[str]]:
        """Each MCP server's command, placeholders filled in."""
        return {n: m.argv(sys.executable, str(self.ws.root)) for n, m in self.mcp.items()}

    def mcp_startup_s(self) -> float:
        """How long a pack MCP server may take to start (the longest any of them declares)."""
        return max((m.startup_timeout_s for m in self.mcp.values()), default=60.0)

    def api_key(self) -> str:
        """What the CLI is given as its key: a placeholder the key proxy swaps on the host."""
        return PLACEHOLDER_KEY

    def base_url(self) -> str:
        """The model's base URL; a CLI cannot run without one here."""
        if not self.model.base_url:
            raise ValueError(f"model {self.model.ref!r} has no base URL for the CLI to use")
        return self.model.base_url.rstrip("/")

    def hook_blocks(self, agent: CliAgent) -> dict[str, list[object]]:
        """The hooks block for the CLI's settings: one entry per task check."""
        # one entry per check: hooks naming the same check are merged into one matcher, so
        # a tool that matches several (Codex's apply_patch is both Write and Edit) runs it once
        matchers: dict[str, list[str]] = {}
        for h in self.hooks:
            m = "*" if h.after_tool in ("*", "") else agent.tools.get(h.after_tool, h.after_tool)
            matchers.setdefault(h.check, []).extend(m.split("|"))
        blocks: dict[str, list[object]] = {}
        for check, names in matchers.items():
            command = shlex.join(
                [
                    sys.executable,
                    "-I",
                    "-m",
                    "lhbench.harness.cli_hook",
                    "--cli",
                    agent.hook_cli,
                    "--check",
                    str((self.checks_dir or self.task_dir) / check),
                    "--root",
                    str(self.ws.root),
                    "--log",
                    str(self.ws.run_dir / "hooks.jsonl"),
                ]
            )
            matcher = "*" if "*" in names else "|".join(dict.fromkeys(names))
            for event, entries in hook_config(agent.hook_cli, command, matcher)["hooks"].items():
                blocks.setdefault(event, []).extend(entries)
        return blocks


Setup = Callable[[CliJob, Path], tuple[list[str], dict[str, str]]]
Reader = Callable[[ImportContext, TranscriptInfo], Iterator[Step]]


@dataclass(frozen=True)
class CliAgent:
    """One CLI: its npm package, binary, hook dialect, tool names, setup and importer."""

    harness: str
    package: str
    binary: str
    hook_cli: str
    tools: dict[str, str]
    setup: Setup
    reader: Reader

    @property
    def env_var(self) -> str:
        """Where a user points at an installed binary, e.g. ``LHBENCH_CLAUDE_BIN``."""
        return f"LHBENCH_{self.binary.upper()}_BIN"


def _claude_setup(job: CliJob, binary: Path) -> tuple[list[str], dict[str, str]]:
    config = ensure_dir_beneath(job.ws.run_dir, "home/.claude")
    tmp = ensure_dir_beneath(job.ws.run_dir, "tmp")
    blocks = job.hook_blocks(CLI_AGENTS["claude-code"])
    settings = _put(job.ws.run_dir, "claude-settings.json", {"hooks": blocks} if blocks else {})
    servers = {
        name: {"type": "stdio", "command": argv[0], "args": argv[1:], "env": job.mcp[name].env}
        for name, argv in job.mcp_argv().items()
    }
    mcp = _put(job.ws.run_dir, "claude-mcp.json", {"mcpServers": servers})
    env = {
        **job.env,
        "ANTHROPIC_BASE_URL": job.base_url().removesuffix("/v1"),
        "ANTHROPIC_API_KEY": job.api_key(),
        "CLAUDE_CONFIG_DIR": str(config),
        "CLAUDE_CODE_TMPDIR": str(tmp),
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "CLAUDE_CODE_MAX_RETRIES": str(job.model.max_retries),
        "DISABLE_AUTOUPDATER": "1",
        "IS_SANDBOX": "1",  # it runs in lhbench's sandbox
        # wait for MCP servers before the first model call (the default does not), as long
        # as the pack allows a server to start
        "MCP_CONNECTION_NONBLOCKING": "false",
        "MCP_TIMEOUT": str(int(1000 * job.mcp_startup_s())),
        "MCP_CONNECT_TIMEOUT_MS": str(int(1000 * job.mcp_startup_s())),
    }
    session = ["--resume", job.session] if job.turn and job.session else []
    if job.turn == 0 and job.session:
        session = ["--session-id", job.session]
    argv = [
        str(binary),
        "-p",
        *session,
        "--output-format",
        "stream-json",
        "--verbose",
        "--dangerously-skip-permissions",
        "--model",
        job.model.name,
        "--settings",
        str(settings),
        "--mcp-config",
        str(mcp),
        "--strict-mcp-config",  # no other MCP source (project ones would need approval)
        "--",
        job.prompt,
    ]
    return argv, env


def _toml(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


def _codex_catalog(binary: Path, run_dir: Path, model: str) -> Path:
    """A model catalog naming ``model``, with MCP tools listed rather than behind tool search.

    Codex decides a model's prompt and tools from its built-in catalog (``codex debug
    models``); an unknown slug gets fallback metadata without ``apply_patch``, and catalogued
    ones defer MCP tools behind ``tool_search``. The installed binary's own entry for the
    slug (or its first entry with ``apply_patch``) is copied, so the schema always matches
    the version; ``model_catalog_json`` then replaces the built-in catalog.
    """
    models = _codex_models(str(binary), binary.stat().st_mtime_ns)
    base = next((m for m in models if m.get("slug") == model), None) or next(
        m for m in models if m.get("apply_patch_tool_type")
    )
    entry = {**base, "slug": model, "supports_search_tool": False}
    return _put(run_dir, "home/.codex/lhbench-models.json", {"models": [entry]})


@functools.lru_cache(maxsize=8)
def _codex_models(binary: str, _mtime: int) -> list[dict[str, Any]]:
    """``codex debug models``, asked once per installed binary, sandboxed in a private home.

    Never with a home the agent could have written (Codex's start-up follows links and
    loads ``.env`` from its home), and never on the host: the CLI is third-party code.
    """
    out = _probe_cli(binary, ["debug", "models"], None, codex_home=True)
    if out is None:
        raise CliNotInstalled(f"{binary} debug models: no answer (no sandbox works here?)")
    models = json.loads(out)["models"]
    return [m for m in models if isinstance(m, dict)]


def _private_env(home: Path, **extra: str) -> dict[str, str]:
    """An environment for running a CLI binary on the host: its own empty home, no keys."""
    (home / ".codex").mkdir(exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": os.environ.get("LANG", "C.UTF-8"),
        **extra,
    }


def _put(root: Path, rel: str, value: object) -> Path:
    """Write a config file lhbench owns under ``root`` (JSON unless ``value`` is text).

    Replaced by a rename and never written through a link: the CLI's home is writable from
    the sandbox, so before a later turn anything there may be a link the agent planted.
    """
    text = value if isinstance(value, str) else json.dumps(value, indent=2)
    replace_beneath(root, rel, text.encode("utf-8"), reset_links=True)
    return root / rel


def _codex_setup(job: CliJob, binary: Path) -> tuple[list[str], dict[str, str]]:
    home = ensure_dir_beneath(job.ws.run_dir, "home/.codex")
    catalog = _codex_catalog(binary, job.ws.run_dir, job.model.name)
    _put(
        job.ws.run_dir,
        "home/.codex/config.toml",
        f"model = {_toml(job.model.name)}\n"
        f"model_catalog_json = {_toml(str(catalog))}\n"
        'model_provider = "lhbench"\n'
        "[model_providers.lhbench]\n"
        'name = "lhbench"\n'
        f"base_url = {_toml(job.base_url())}\n"
        'env_key = "LHBENCH_MODEL_API_KEY"\n'
        'wire_api = "responses"\n'
        f"request_max_retries = {job.model.max_retries}\n"
        "stream_max_retries = 0\n"
        f"stream_idle_timeout_ms = {int(job.model.timeout_s * 1000)}\n"
        "[analytics]\nenabled = false\n"
        + "".join(
            f"[mcp_servers.{name}]\ncommand = {_toml(argv[0])}\n"
            f"args = [{', '.join(_toml(a) for a in argv[1:])}]\n"
            f"startup_timeout_sec = {job.mcp[name].startup_timeout_s:g}\n"
            "required = true\n"  # a server that fails to start fails the run, not silently
            + (
                f"[mcp_servers.{name}.env]\n"
                + "".join(f"{k} = {_toml(v)}\n" for k, v in job.mcp[name].env.items())
                if job.mcp[name].env
                else ""
            )
            for name, argv in job.mcp_argv().items()
        ),
    )
    blocks = job.hook_blocks(CLI_AGENTS["codex"])
    _put(job.ws.run_dir, "home/.codex/hooks.json", {"hooks": blocks})
    if job.skills:  # Codex takes skills inline, in its global instructions
        _put(job.ws.run_dir, "home/.codex/AGENTS.md", "\n\n".join(job.skills.values()))
    env = {**job.env, "CODEX_HOME": str(home), "LHBENCH_MODEL_API_KEY": job.api_key()}
    argv = [
        str(binary),
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
        "--dangerously-bypass-hook-trust",
        # plugin and app sync calls home even with analytics off
        "--disable",
        "plugins",
        "--disable",
        "remote_plugin",
        "--disable",
        "apps",
    ]
    if job.turn and job.session:
        argv += ["resume", job.session]
    return [*argv, job.prompt], env


def _gemini_setup(job: CliJob, binary: Path) -> tuple[list[str], dict[str, str]]:
    home = job.ws.home
    ensure_dir_beneath(job.ws.run_dir, "home/.gemini")
    settings: dict[str, object] = {
        # a custom base URL switches auth to "gateway", which headless mode rejects
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": False},  # the only switch for Clearcut
        "general": {
            "enableAutoUpdate": False,
            "enableAutoUpdateNotification": False,
            "maxAttempts": job.model.max_retries + 1,
        },
        "telemetry": {"enabled": False},
    }
    if blocks := job.hook_blocks(CLI_AGENTS["gemini-cli"]):
        settings["hooks"] = blocks
    if job.mcp:
        settings["mcpServers"] = {
            name: {"command": argv[0], "args": argv[1:], "env": job.mcp[name].env, "trust": True}
            for name, argv in job.mcp_argv().items()
        }
    _put(job.ws.run_dir, "home/.gemini/settings.json", settings)
    env = {
        **job.env,
        "GEMINI_CLI_HOME": str(home),
        "GOOGLE_GEMINI_BASE_URL": job.base_url().removesuffix("/v1"),
        "GEMINI_API_KEY": job.api_key(),
        "GEMINI_CLI_TRUST_WORKSPACE": "true",
        "GEMINI_SANDBOX": "false",
        "GEMINI_TELEMETRY_ENABLED": "false",
        "TMPDIR": str(ensure_dir_beneath(job.ws.run_dir, "tmp")),
    }
    # -m pins the model, so no router call goes to another model first
    argv = [str(binary), "-m", job.model.name, "--output-format", "stream-json", "--yolo"]
    if job.session:
        argv += ["--resume", job.session] if job.turn else ["--session-id", job.session]
    return [*argv, "-p", job.prompt], env


BUILTIN_CLI_AGENTS: tuple[CliAgent, ...] = (
    CliAgent(
        harness="claude-code",
        # the newest release whose engines field accepts Node 20 (later ones need Node >= 22)
        package="@anthropic-ai/claude-code@2.1.197",
        binary="claude",
        hook_cli="claude",
        tools={"write_file": "Write", "edit_file": "Edit|MultiEdit", "shell": "Bash"},
        setup=_claude_setup,
        reader=read_claude_code,
    ),
    CliAgent(
        harness="codex",
        package="@openai/codex@0.169.0",
        binary="codex",
        hook_cli="codex",
        # apply_patch also matches the aliases Write and Edit
        tools={"write_file": "Write", "edit_file": "Edit", "shell": "Bash"},
        setup=_codex_setup,
        reader=read_codex,
    ),
    CliAgent(
        harness="gemini-cli",
        package="@google/gemini-cli@0.61.0",
        binary="gemini",
        hook_cli="gemini",
        tools={"write_file": "write_file", "edit_file": "replace", "shell": "run_shell_command"},
        setup=_gemini_setup,
        reader=read_gemini,
    ),
)

# the CLI harnesses: the built-ins above (entry point group lhbench.harnesses, like any
# plugin's), then installed plugins' (see lhbench.plugins)
CLI_AGENTS: Registry[CliAgent] = Registry(
    GROUPS["harnesses"],
    lambda: BUILTIN_CLI_AGENTS,
    adapt=adapter(CliAgent, "a CliAgent"),
    name_of=lambda a: a.harness,
)


@dataclass
class CliRun:
    """What one CLI run left: exit code, transcript, normalized steps, hook records."""

    exit_code: int | None
    timed_out: bool
    transcript: Path
    stderr: str
    info: TranscriptInfo
    steps: list[Step]
    hook_log: list[dict[str, object]] = field(default_factory=list)
    disk_limit: str | None = None  # why the CLI was stopped for writing past its disk limit


def cli_binary(agent: CliAgent, prefix: Path | None = None) -> Path:
    """``$LHBENCH_<BIN>_BIN``, else ``PREFIX/node_modules/.bin/<bin>``, else PATH's."""
    if env := os.environ.get(agent.env_var):
        if not Path(env).is_file():
            raise CliNotInstalled(
                f"{agent.env_var}={env}: no such file; point it at the `{agent.binary}` "
                f"binary (`npm i --prefix DIR {agent.package}` puts it in DIR/node_modules/.bin/)"
            )
        return Path(env)
    if prefix is not None and (prefix / "node_modules" / ".bin" / agent.binary).exists():
        return prefix / "node_modules" / ".bin" / agent.binary
    found = shutil.which(agent.binary)
    if found is None:
        raise CliNotInstalled(
            f"--harness {agent.harness}: `{agent.binary}` is not installed: run "
            f"`npm i --prefix DIR {agent.package}` and set "
            f"{agent.env_var}=DIR/node_modules/.bin/{agent.binary} (or put it on PATH)"
        )
    return Path(found)


def cli_version(binary: Path, sandbox: Sandbox | None = None) -> str | None:
    """The version the binary reports (``--version``), e.g. ``0.169.0``.

    Asked once per installed binary, in the sandbox (``sandbox``, else the default one)
    with a private empty home: the CLI is third-party code, and even ``--version`` makes
    some CLIs write, delete or follow links under their home. None when it cannot say.
    """
    try:
        return _cli_version(str(binary), binary.stat().st_mtime_ns, cast(Hashable, sandbox))
    except OSError:
        return None


@functools.lru_cache(maxsize=16)
def _cli_version(binary: str, _mtime: int, sandbox: Hashable) -> str | None:
    out = _probe_cli(binary, ["--version"], cast("Sandbox | None", sandbox))
    found = re.search(r"\d+\.\d+\.\d+[\w.-]*", out or "")
    return found.group(0) if found else None


def _probe_cli(
    binary: str, args: list[str], sandbox: Sandbox | None, *, codex_home: bool = False
) -> str | None:
    """What ``binary args`` prints, run in the sandbox with a private empty home."""
    from lhbench.sandbox import SandboxUnavailable, get_sandbox, run_sandboxed_sync

    try:
        sandbox = sandbox or get_sandbox()
    except SandboxUnavailable:
        return None
    with tempfile.TemporaryDirectory(prefix="lhbench-cli-") as private:
        home = Path(private)
        extra = {"CODEX_HOME": str(home / ".codex")} if codex_home else {}
        policy = policy_for(
            home,
            writable=[home],
            readable=cli_mounts(Path(binary)),
            env=_private_env(home, **extra),
            home=home,
            limits=Limits(wall_s=60, cpu_s=60, memory_mb=4096, address_space=False),
        )
        done = run_sandboxed_sync(sandbox, [binary, *args], policy)
    return done.text() if done.returncode == 0 else None


def install_cli(agent: CliAgent, prefix: Path) -> Path:
    """Install the CLI from the npm registry into ``prefix`` (kept; a second call is a no-op)."""
    binary = prefix / "node_modules" / ".bin" / agent.binary
    if not binary.exists():
        if shutil.which("npm") is None:
            raise CliNotInstalled(
                f"cannot install {agent.package}: npm is not on PATH "
                "(scripts/system-deps installs Node.js and npm from Debian)"
            )
        prefix.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "i", "--no-audit", "--no-fund", "--prefix", str(prefix), agent.package],
            check=True,
            capture_output=True,
            text=True,
            timeout=600,
        )
    return binary


def _session_of(agent: CliAgent, transcript: Path) -> str | None:
    """The CLI's session id, from its first transcript line that names one."""
    try:
        with transcript.open(encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    doc = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if not isinstance(doc, dict):
                    continue
                sid = doc.get("thread_id") or doc.get("session_id")
                if isinstance(sid, str) and sid:
                    return sid
    except OSError:
        return None
    return None


def cli_mounts(binary: Path) -> list[Path]:
    """The CLI's install (its npm prefix), to bind read-only into the sandbox."""
    real = binary.resolve()
    broad = {Path.home().resolve(), Path("/"), Path("/root"), Path("/home")}
    for parent in real.parents:
        if parent.name == "node_modules":
            # a prefix that is a home directory would show the whole home: bind only the
            # node_modules directory then
            return [parent] if parent.parent in broad else [parent.parent]
    return [real.parent]


MODEL_PORT = 18080  # where the relay listens for the model inside the sandbox


def model_endpoint(model: ModelSpec, socket: Path) -> tuple[Endpoint, str]:
    """The one endpoint the CLI may reach, and the base URL it uses inside the sandbox.

    Inside, the CLI talks plain HTTP to ``127.0.0.1:MODEL_PORT`` (the base URL's path kept);
    the relay carries that to ``socket``, the key proxy on the host, which speaks to the
    real endpoint (TLS included) with the real key.
    """
    from urllib.parse import urlsplit

    if not model.base_url:
        raise ValueError(f"model {model.ref!r} has no base URL for the CLI to use")
    path = urlsplit(model.base_url).path.rstrip("/")
    return Endpoint(
        "127.0.0.1", 0, MODEL_PORT, socket=socket
    ), f"http://127.0.0.1:{MODEL_PORT}{path}"


def _origin(model: ModelSpec) -> str:
    """``scheme://host[:port]`` of the model's base URL (the proxy's upstream)."""
    from urllib.parse import urlsplit

    parts = urlsplit(model.base_url or "")
    return f"{parts.scheme}://{parts.netloc}"


def _real_key(model: ModelSpec) -> str:
    """The model's key from its ``api_key_env`` (empty for a local server that needs none)."""
    return os.environ.get(model.api_key_env, "") if model.api_key_env else ""


async def run_cli_agent(
    agent: CliAgent,
    *,
    binary: Path,
    ws: Workspace,
    task_dir: Path,
    turns: list[str],
    model: ModelSpec,
    env: dict[str, str],
    hooks: list[HookSpec],
    skills: dict[str, str],
    sandbox: Sandbox,
    mcp: dict[str, McpServerSpec] | None = None,
    wall_seconds: float | None = None,
    start_turn: int = 0,
    on_turn_done: Callable[[int], None] | None = None,
    on_step: Callable[[Step], None] | None = None,
    first_index: int = 0,
    disk_mb: int | None = None,
) -> CliRun:
    """Play the task's turns one by one in the CLI, each resuming the CLI's own session.

    The CLI runs in the sandbox: the workspace, its home and temp directory read-write; the
    rest of the run directory (settings, copied hook checks, transcripts) and the CLI's
    install read-only; and the model reachable only through the key proxy (the real key
    stays on the host). Each turn's transcript goes to the run directory and is normalized; the
    steps of all turns make the trajectory.
    """
    proxy_dir = Path(tempfile.mkdtemp(prefix="lhbench-model-"))
    proxy = KeyProxy(proxy_dir / "model.sock", _origin(model), _real_key(model))
    endpoint, inside_url = model_endpoint(model, proxy.path)
    sandboxed_model = model.model_copy(update={"base_url": inside_url})
    checks = ws.run_dir / "checks"
    checks.mkdir(exist_ok=True)
    (ws.run_dir / "tmp").mkdir(exist_ok=True)
    (ws.run_dir / "hooks.jsonl").touch()
    for h in hooks:
        src = task_dir / h.check
        if src.is_file():
            (checks / h.check).parent.mkdir(parents=True, exist_ok=True)
            (checks / h.check).write_bytes(src.read_bytes())
    state_file = ws.run_dir / f"{agent.harness}-session.json"
    session = (
        json.loads(state_file.read_text()).get("session") if state_file.exists() else None
    ) or (str(uuid.uuid4()) if agent.harness != "codex" else None)
    deadline = None if wall_seconds is None else time.monotonic() + wall_seconds
    steps: list[Step] = []
    info = TranscriptInfo(source="")
    exit_code: int | None = 0
    timed_out = False
    stderr = ""
    disk_limit: str | None = None
    transcripts: list[Path] = []
    with proxy:  # the model, with its real key, reached only through this
        for n, prompt in enumerate(turns):
            if n < start_turn:
                continue
            job = CliJob(
                ws,
                task_dir,
                prompt,
                sandboxed_model,
                env,
                hooks,
                skills,
                mcp or {},
                n,
                session,
                checks,
            )
            argv, run_env = agent.setup(job, binary)
            remaining = None if deadline is None else max(1.0, deadline - time.monotonic())
            policy = policy_for(
                ws.root,
                # the run directory read-only (the CLI's settings, hooks and MCP config, which
                # the agent must not rewrite for the next turn; the transcripts), except the
                # workspace, the CLI's home (sessions), its temp directory and the hook log
                writable=[ws.root, ws.home, ws.run_dir / "tmp", ws.run_dir / "hooks.jsonl"],
                readable=[ws.run_dir, *cli_mounts(binary)],
                env={**run_env, "LHBENCH_IN_SANDBOX": "1"},
                home=ws.home,
                endpoints=[endpoint],
                limits=Limits(
                    wall_s=remaining,
                    cpu_s=None,
                    memory_mb=8192,
                    address_space=False,
                    file_mb=1024,
                    disk_mb=disk_mb,
                    processes=1024,
                ),
            )
            transcript = ws.run_dir / f"{agent.harness}-turn{n + 1}.jsonl"
            done = await run_sandboxed(sandbox, argv, policy, stdout_path=transcript)
            transcripts.append(transcript)
            exit_code, timed_out = done.returncode, done.timed_out
            stderr = done.text("stderr")
            if done.disk_limit is not None:
                disk_limit = str(done.disk_limit)
            session = _session_of(agent, transcript) or session
            state_file.write_text(json.dumps({"session": session}))
            ctx = ImportContext(transcript)
            turn_info = TranscriptInfo(source=str(transcript))
            for step in agent.reader(ctx, turn_info):
                step = step.model_copy(update={"index": first_index + len(steps)})
                steps.append(step)
                if on_step is not None:
                    on_step(step)
            info = _merge(info, turn_info)
            if timed_out or exit_code != 0 or disk_limit is not None:
                break
            if on_turn_done is not None:
                on_turn_done(n)
    shutil.rmtree(proxy_dir, ignore_errors=True)
    records = read_hook_log(ws.run_dir)
    return CliRun(
        exit_code,
        timed_out,
        transcripts[-1] if transcripts else ws.run_dir / f"{agent.harness}.jsonl",
        stderr,
        info,
        steps,
        records,
        disk_limit,
    )


MAX_HOOK_RECORDS = 10_000
MAX_HOOK_LINE = 64 << 10


def read_hook_log(run_dir: Path) -> list[dict[str, Any]]:
    """The hook program's records, bounded: the log is writable from the agent's sandbox.

    Read line by line without following a link; at most :data:`MAX_HOOK_RECORDS` records,
    lines over :data:`MAX_HOOK_LINE` bytes and lines that do not parse to an object skipped.
    """
    try:
        fd = open_beneath(run_dir, "hooks.jsonl")
    except (FileNotFoundError, EscapeError, NotARegularFile, IsADirectoryError):
        return []
    records: list[dict[str, Any]] = []
    with os.fdopen(fd, "rb") as f:
        while len(records) < MAX_HOOK_RECORDS:
            line = f.readline(MAX_HOOK_LINE + 1)
            if not line:
                break
            if len(line) > MAX_HOOK_LINE:
                while line and not line.endswith(b"\n"):  # skip the rest of a long line
                    line = f.readline(MAX_HOOK_LINE)
                continue
            try:
                rec = json.loads(line)
            except (ValueError, RecursionError):
                continue
            if isinstance(rec, dict):
                records.append(rec)
    return records


def _merge(total: TranscriptInfo, turn: TranscriptInfo) -> TranscriptInfo:
    """One run's info from its turns: usage and cost summed, the last turn's status."""
    merged = turn
    merged.usage = total.usage + turn.usage if total.source else turn.usage
    if total.cost_usd is not None or turn.cost_usd is not None:
        merged.cost_usd = (total.cost_usd or 0.0) + (turn.cost_usd or 0.0)
    merged.started_at = total.started_at or turn.started_at
    merged.harness_version = turn.harness_version or total.harness_version
    merged.model = turn.model or total.model
    merged.source = turn.source
    return merged
