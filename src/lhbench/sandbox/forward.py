"""The two halves of a sandbox's only way out: a relay inside, a forwarder outside.

Inside (no network namespace of its own to speak of: loopback only), the relay listens on
``127.0.0.1:PORT`` and carries each connection over a Unix socket bound into the sandbox.
Outside, the forwarder accepts on that Unix socket and connects to the one endpoint the
harness allowed; it can reach nothing else, whatever the sandboxed program asks for.
Bytes are copied as they are (TLS stays end to end). A forwarder serves a bounded number
of connections at once and closes idle ones. A PostgreSQL endpoint's forwarder is also a
gate (:mod:`lhbench.sandbox.pg_gate`): it admits only the one role and database it was
made for, whatever the sandboxed program asks for.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from pathlib import Path

from lhbench.sandbox.pg_gate import PgAccess, PgGate
from lhbench.sandbox.relay import pipe

__all__ = ["Forwarder", "pipe"]


class Forwarder:
    """Accepts on a Unix socket and connects each client to ``host:port`` (only there).

    Use as a context manager; ``path`` is the socket to bind into the sandbox. With
    ``postgres``, each connection passes the PostgreSQL gate first (``self.gate``).
    """

    def __init__(
        self,
        path: Path,
        host: str,
        port: int,
        *,
        timeout_s: float = 30.0,
        max_connections: int = 32,
        idle_s: float = 900.0,
        postgres: PgAccess | None = None,
    ) -> None:
        self.path = path
        self.host = host
        self.port = port
        self.timeout_s = timeout_s
        self.idle_s = idle_s
        self.connections = 0
        self.refused = 0
        self.gate = PgGate(postgres, host, port, timeout_s=timeout_s) if postgres else None
        # each connection costs this process two threads and an upstream socket: a
        # sandboxed program opening thousands must not exhaust the host
        self._slots = threading.BoundedSemaphore(max_connections)
        self._server: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def __enter__(self) -> Forwarder:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(self.path))
        self.path.chmod(0o777)  # the sandboxed uid is mapped, not the same user
        server.listen(64)
        server.settimeout(0.2)
        self._server = server
        self._thread = threading.Thread(target=self._serve, daemon=True, name="lhbench-forward")
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None and self._thread.is_alive():
            # a connection of our own wakes the accept at once: the loop used to notice
            # the stop only at its next 0.2 s timeout, which every networked sandbox's
            # close waited for (never blocking: with a full backlog, the timeout still ends it)
            with contextlib.suppress(OSError), socket.socket(socket.AF_UNIX) as waker:
                waker.setblocking(False)
                waker.connect(str(self.path))
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._server is not None:
            self._server.close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def _serve(self) -> None:
        assert self._server is not None
        while not self._stop.is_set():
            try:
                client, _ = self._server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            if self._stop.is_set():  # the waker of __exit__, or a client too late
                client.close()
                return
            if not self._slots.acquire(blocking=False):
                self.refused += 1
                client.close()
                continue
            self.connections += 1
            threading.Thread(target=self._one, args=(client,), daemon=True).start()

    def _one(self, client: socket.socket) -> None:
        try:
            if self.gate is not None:
                self.gate.handle(client, self.idle_s)
                return
            try:
                upstream = socket.create_connection((self.host, self.port), timeout=self.timeout_s)
            except OSError:
                client.close()
                return
            # a connection idle this long (no byte either way) is closed
            upstream.settimeout(self.idle_s)
            client.settimeout(self.idle_s)
            pipe(client, upstream)
        finally:
            self._slots.release()
