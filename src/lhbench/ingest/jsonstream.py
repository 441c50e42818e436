"""A JSON document as a stream of parse events, for documents too large to load whole.

Built on ``ijson`` (yajl): nothing but the value being built is held, and the caller
decides per key whether to build a value (bounded in events and depth) or skip it. A
parse error ends the stream and is kept as ``error``: the caller reports it and keeps
what it read before.
"""

from __future__ import annotations

from typing import Any

import ijson  # type: ignore[import-untyped]

__all__ = ["Events"]

_CONTAINERS = ("start_map", "start_array")
_ENDS = ("end_map", "end_array")
Event = tuple[str, Any]


class Events:
    """Parse events of one document (``(event, value)``; ``None`` at the end or on an error)."""

    def __init__(self, f: Any, *, max_events: int = 500_000, max_depth: int = 100) -> None:
        self._it = ijson.basic_parse(f, use_float=True, buf_size=1 << 16)
        self.error: str | None = None
        self.max_events = max_events
        self.max_depth = max_depth

    def next(self) -> Event | None:
        """The next event, or None (the document ended, or it is malformed: see ``error``)."""
        if self.error is not None:
            return None
        try:
            return next(self._it)  # type: ignore[no-any-return]
        except StopIteration:
            return None
        except Exception as exc:  # yajl's and the decoder's errors: a malformed document
            msg = exc.args[0] if exc.args else type(exc).__name__
            if isinstance(msg, bytes):
                msg = msg.decode("utf-8", errors="replace")
            self.error = (str(msg).strip().splitlines() or [type(exc).__name__])[0][:300]
            return None

    def skip(self, first: Event) -> bool:
        """Consume the rest of the value ``first`` opens; False if the stream broke."""
        if first[0] not in _CONTAINERS:
            return True
        depth = 1
        while depth:
            e = self.next()
            if e is None:
                return False
            if e[0] in _CONTAINERS:
                depth += 1
            elif e[0] in _ENDS:
                depth -= 1
        return True

    def build(self, first: Event) -> tuple[Any, str | None]:
        """The value ``first`` opens, as Python objects, and what was wrong with it (if anything).

        Past ``max_depth`` containers are replaced by a note; past ``max_events`` the value
        is dropped (None) and the rest of it skipped.
        """
        ev, val = first
        if ev not in _CONTAINERS:
            return (None if ev == "null" else val), None
        root: Any = {} if ev == "start_map" else []
        stack: list[Any] = [root]
        keys: list[Any] = [None]
        count = 0
        deep = 0  # containers open beyond max_depth (not built)
        problem: str | None = None
        while stack:
            e = self.next()
            if e is None:
                return None, f"unreadable from here on ({self.error or 'the document ended'})"
            ev, val = e
            count += 1
            if count > self.max_events:
                depth = len(stack) + deep
                while depth:
                    e = self.next()
                    if e is None:
                        break
                    if e[0] in _CONTAINERS:
                        depth += 1
                    elif e[0] in _ENDS:
                        depth -= 1
                return None, f"over {self.max_events} JSON values: dropped"
            if deep:
                if ev in _CONTAINERS:
                    deep += 1
                elif ev in _ENDS:
                    deep -= 1
                continue
            if ev == "map_key":
                keys[-1] = val
                continue
            if ev in _ENDS:
                stack.pop()
                keys.pop()
                continue
            if ev in _CONTAINERS:
                if len(stack) >= self.max_depth:
                    value: Any = "[nested too deep]"
                    deep = 1
                    problem = f"nested deeper than {self.max_depth} levels: cut"
                else:
                    value = {} if ev == "start_map" else []
            else:
                value = val
            top = stack[-1]
            if type(top) is dict:
                top[keys[-1]] = value
            else:
                top.append(value)
            if not deep and ev in _CONTAINERS:
                stack.append(value)
                keys.append(None)
        return root, problem
