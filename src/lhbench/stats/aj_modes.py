"""AJ-Bench's failure modes (A.7) of a wrong agent verdict, where a rule can tell them.

(a) the judge called no tool; (b) it called tools, none of which read this environment's
final state. (c) misread tool output and (d) wrong reasoning need a reviewer.
"""

from __future__ import annotations

from lhbench.schema import EnvironmentKind, Verdict

__all__ = ["JUDGE_STATE_TOOLS", "failure_mode"]

# the tools that read each environment's final state (anything else is mode (b))
JUDGE_STATE_TOOLS: dict[str, frozenset[str]] = {
    EnvironmentKind.FILESYSTEM.value: frozenset(
        {"list_directory", "directory_tree", "read_file", "search_files", "get_file_info"}
    ),
    EnvironmentKind.SQL.value: frozenset({"list_tables", "describe_table", "query"}),
    EnvironmentKind.WEB.value: frozenset({"search", "open_url", "find_in_page"}),
    EnvironmentKind.GUI.value: frozenset(
        {"document_info", "render_pages", "read_document", "view_screenshot", "view_a11y_tree"}
    ),
}


def failure_mode(verdict: Verdict, label: bool, kind: str | None) -> str | None:
    """The AJ-Bench A.7 mode of a wrong verdict: its stored tag, else (a)/(b) by rule.

    (a) an agent judge that called no tool; (b) one whose tools never read this
    environment's state. (c) and (d) need a reviewer's tag (``lhbench aj tag``).
    """
    if verdict.verdict is None or (verdict.verdict == "PASS") == label:
        return None
    if verdict.failure_mode:
        return verdict.failure_mode
    if verdict.judge.kind.value != "agent":
        return None
    if not verdict.tools_used:
        return "a"
    if kind in JUDGE_STATE_TOOLS and not set(verdict.tools_used) & JUDGE_STATE_TOOLS[kind]:
        return "b"
    return None
