"""Tool functions apart from the protocol that serves them: MCP, or the judges' tool worker.

A tool module registers its functions on anything with a ``tool()`` decorator: an
:class:`McpTools` (the MCP SDK's server, for agents and outside MCP clients) or a
:class:`ToolSet` (what :mod:`lhbench.tools.worker` serves to a judge from inside the
sandbox, without importing the MCP SDK: it alone costs about a second of CPU per process).
A function refuses by raising :class:`ToolFailure`; the caller sees its text either way.
A function may answer with images (:class:`Image`, alone or in a list with text). This
module imports nothing heavy: the sandboxed worker starts from it.
"""

from __future__ import annotations

import functools
import inspect
import operator
import types
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

__all__ = ["Image", "McpTools", "Registrar", "ToolFailure", "ToolSet"]

F = TypeVar("F", bound=Callable[..., Any])


class ToolFailure(Exception):
    """A tool's refusal or failure that its caller reads (a path outside, a bad query)."""


class Image:
    """An image a tool answers with (PNG unless said)."""

    def __init__(self, data: bytes, format: str = "png") -> None:
        self.data = data
        self.format = format


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
        from mcp.server.mcpserver import Image as McpImage
        from mcp.server.mcpserver.exceptions import ToolError

        def register(fn: F) -> F:
            @functools.wraps(fn)
            def call(*args: Any, **kwargs: Any) -> Any:
                try:
                    return _as_mcp(fn(*args, **kwargs), McpImage)
                except ToolFailure as exc:
                    raise ToolError(str(exc)) from None

            # the SDK reads the signature for the schemas: images are its own Image type
            sig = inspect.signature(fn, eval_str=True)
            call.__signature__ = sig.replace(  # type: ignore[attr-defined]
                return_annotation=_swap(sig.return_annotation, McpImage)
            )
            self.server.tool()(call)
            return fn

        return register


def _as_mcp(result: Any, mcp_image: type) -> Any:
    if isinstance(result, Image):
        return mcp_image(data=result.data, format=result.format)
    if isinstance(result, list):
        return [_as_mcp(r, mcp_image) for r in result]
    return result


def _swap(annotation: Any, new: type) -> Any:
    """``annotation`` with :class:`Image` replaced by ``new`` (in lists and unions too)."""
    if annotation is Image:
        return new
    args = typing.get_args(annotation)
    if not args:
        return annotation
    swapped = tuple(_swap(a, new) for a in args)
    if swapped == args:
        return annotation
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return functools.reduce(operator.or_, swapped)
    return origin[swapped]
