"""Tool functions apart from the protocol that serves them: MCP, or the judges' tool worker.

A tool module registers its functions on anything with a ``tool()`` decorator: an
:class:`McpTools` (the MCP SDK's server, for agents and outside MCP clients) or a
:class:`ToolSet` (what :mod:`lhbench.tools.worker` serves to a judge from inside the
sandbox, without importing the MCP SDK: it alone costs about a second of CPU per process).
A function refuses by raising :class:`ToolFailure`; the caller sees its text either way.
This module imports nothing heavy: the sandboxed worker starts from it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["McpTools", "Registrar", "ToolFailure", "ToolSet"]

F = TypeVar("F", bound=Callable[..., Any])


class ToolFailure(Exception):
    """A tool's refusal or failure that its caller reads (a path outside, a bad query)."""


class Registrar(Protocol):
    """What a tool module registers its functions on."""

    def tool(self) -> Callable[[F], F]:
        """A decorator that registers a function as a tool under its own name."""
        ...


class ToolSet:
    """Tool functions by name, in the order registered (what the worker serves)."""

    def __init__(self) -> None:
        self.functions: dict[str, Callable[..., Any]] = {}

    def tool(self) -> Callable[[F], F]:
        """Register ``fn`` under its name (a second function of the same name replaces it)."""

        def register(fn: F) -> F:
            self.functions[fn.__name__] = fn
            return fn

        return register


class McpTools:
    """Registers tool functions on an MCP SDK server, a :class:`ToolFailure` as its ToolError."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server

    def tool(self) -> Callable[[F], F]:
        """Register ``fn`` on the server; its signature and docstring are the tool's schema."""
        from mcp.server.mcpserver.exceptions import ToolError

        def register(fn: F) -> F:
            @functools.wraps(fn)
            def call(*args: Any, **kwargs: Any) -> Any:
                try:
                    return fn(*args, **kwargs)
                except ToolFailure as exc:
                    raise ToolError(str(exc)) from None

            self.server.tool()(call)
            return fn

        return register
