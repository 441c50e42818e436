"""Read-only filesystem tools over MCP, confined to one environment root.

list_directory, directory_tree, read_file (line ranges), search_files, get_file_info. A
path that is absolute, climbs out with ``..``, or leads out through a symlink is refused
with a tool error naming the path; files are opened without following symlinks, devices,
FIFOs and sockets are never read, and every answer is bounded. Nothing here can write.
A content search's pattern is the judge's (and may be steered by the agent's text): it runs
on the ``regex`` engine with a CPU budget for the whole search, so a pattern that
backtracks without end stops with a tool error instead of holding the judge.
"""

from __future__ import annotations

import fnmatch
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING

import regex

from lhbench.envs.paths import EscapeError, NotARegularFile, inside, read_beneath
from lhbench.tools.registry import McpTools, Registrar, ToolFailure

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["add_fs_tools", "build_fs_server"]

MAX_READ_BYTES = 200_000
MAX_SEARCH_BYTES = 20_000_000  # read by one content search
MAX_ENTRIES = 500
SEARCH_CPU_S = 2.0  # CPU time one content search's pattern may use, over all files


class ToolRefused(ToolFailure):
    """A refused tool call: the judge sees the reason as the tool's error."""


def _resolve(root: Path, path: str, *, must_exist: bool = True) -> Path:
    try:
        return inside(root, path or ".", must_exist=must_exist)
    except EscapeError as exc:
        raise ToolRefused(f"refused: {exc}") from None
    except FileNotFoundError as exc:
        raise ToolRefused(str(exc)) from None


def _read(root: Path, path: str, limit: int) -> tuple[bytes, int]:
    """Up to ``limit`` bytes of a regular file, opened without following any symlink."""
    try:
        return read_beneath(root, path or ".", limit=limit)
    except IsADirectoryError:
        raise ToolRefused(f"is a directory: {path}") from None
    except (EscapeError, NotARegularFile) as exc:
        raise ToolRefused(f"refused: {exc}") from None
    except FileNotFoundError:
        raise ToolRefused(f"no such file: {path}") from None


def build_fs_server(root: Path, server: MCPServer | None = None) -> MCPServer:
    """An MCP server exposing read-only views of ``root`` (or those tools added to ``server``)."""
    from mcp.server.mcpserver import MCPServer

    server = server or MCPServer(
        "lhbench-fs", instructions=f"Read-only view of the environment at {root.resolve().name}/"
    )
    add_fs_tools(root, McpTools(server))
    return server


def add_fs_tools(root: Path, server: Registrar) -> None:
    """Register the read-only file tools over ``root`` on ``server``."""
    root = root.resolve()

    def rel(p: Path) -> str:
        return p.relative_to(root).as_posix() or "."

    @server.tool()
    def list_directory(path: str = ".") -> str:
        """List a directory's entries ([DIR] or [FILE]) relative to the environment root."""
        target = _resolve(root, path)
        if not target.is_dir():
            raise ToolRefused(f"not a directory: {path}")
        entries = sorted(target.iterdir())[:MAX_ENTRIES]
        return (
            "\n".join(f"{'[DIR] ' if e.is_dir() else '[FILE]'} {rel(e)}" for e in entries)
            or "(empty)"
        )

    @server.tool()
    def directory_tree(path: str = ".", max_depth: int = 4) -> str:
        """An indented tree of files and directories under a path."""
        target = _resolve(root, path)
        lines: list[str] = []

        def walk(d: Path, depth: int) -> None:
            for e in sorted(d.iterdir()):
                if len(lines) >= MAX_ENTRIES:
                    return
                lines.append("  " * depth + e.name + ("/" if e.is_dir() else ""))
                if e.is_dir() and not e.is_symlink() and depth + 1 < max_depth:
                    walk(e, depth + 1)

        walk(target, 0)
        return "\n".join(lines) or "(empty)"

    @server.tool()
    def read_file(path: str, start_line: int = 1, end_line: int | None = None) -> str:
        """Read a text file, optionally only lines start_line..end_line (1-based, inclusive)."""
        data, size = _read(root, path, MAX_READ_BYTES)
        lines = data.decode("utf-8", errors="replace").splitlines()
        end = len(lines) if end_line is None else min(end_line, len(lines))
        chosen = lines[max(start_line, 1) - 1 : end]
        note = f"\n[truncated at {MAX_READ_BYTES} of {size} bytes]" if size > MAX_READ_BYTES else ""
        return "\n".join(chosen) + note

    @server.tool()
    def search_files(pattern: str, path: str = ".", content: str | None = None) -> str:
        """Files under path whose name matches a glob and, if given, whose text matches a regex."""
        target = _resolve(root, path)
        try:
            pattern_re = regex.compile(content, regex.V0) if content else None
        except (regex.error, ValueError, RecursionError) as exc:
            raise ToolRefused(f"bad regex {content!r}: {exc}") from None
        hits: list[str] = []
        scanned = 0
        budget = SEARCH_CPU_S
        started = time.process_time()
        for p in sorted(target.rglob("*")):
            if p.is_symlink() or not p.is_file() or not fnmatch.fnmatch(p.name, pattern):
                continue
            if pattern_re is not None:
                if scanned >= MAX_SEARCH_BYTES:
                    hits.append(f"[search stopped after reading {scanned} bytes]")
                    break
                try:
                    data, _ = read_beneath(root, rel(p), limit=MAX_READ_BYTES)
                except (EscapeError, NotARegularFile, OSError):
                    continue
                scanned += len(data)
                left = budget - (time.process_time() - started)
                try:
                    if left <= 0:
                        raise TimeoutError
                    found = pattern_re.search(data.decode("utf-8", errors="replace"), timeout=left)
                except TimeoutError:
                    raise ToolRefused(
                        f"search stopped: the regex {content!r} used its {budget:g} s CPU budget "
                        f"(at {rel(p)}, after {len(hits)} match(es)); it backtracks too much, "
                        "try a simpler pattern"
                    ) from None
                if not found:
                    continue
            hits.append(rel(p))
            if len(hits) >= MAX_ENTRIES:
                break
        return "\n".join(hits) or "(no matches)"

    @server.tool()
    def get_file_info(path: str) -> str:
        """Size, type and line count of a file or directory."""
        target = _resolve(root, path)
        st = target.lstat()
        if stat.S_ISDIR(st.st_mode):
            return f"path: {rel(target)}\ntype: directory\nsize: {st.st_size}\nlines: None"
        if not stat.S_ISREG(st.st_mode):
            return f"path: {rel(target)}\ntype: special file (not read)\nsize: {st.st_size}"
        data, size = _read(root, path, MAX_READ_BYTES)
        count = data.count(b"\n")
        lines = f"{count}+" if size > len(data) else str(count)
        return f"path: {rel(target)}\ntype: file\nsize: {size}\nlines: {lines}"
