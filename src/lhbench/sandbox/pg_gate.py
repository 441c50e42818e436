r"""The PostgreSQL gate: the forwarder's half that decides who a sandbox may be on the server.

Many PostgreSQL servers trust loopback connections (most dev and CI set-ups do): whoever
reaches the port may log in as any role, ``postgres`` included, without a password. A
sandbox that reaches the server through a plain forwarder may therefore become a superuser
and run ``COPY … TO PROGRAM`` on the host, whatever URL it was given. So the forwarder of a
PostgreSQL endpoint reads the startup message (protocol 3.0: length, version, ``key\0value``
pairs) and admits only the one role and database it was made for; any other is answered
with a FATAL ``ErrorResponse`` (SQLSTATE 28000) a client prints as it is.

Around that:

- ``SSLRequest`` and ``GSSENCRequest`` are answered ``N`` (the client goes on in the
  clear, inside this host); a replication connection is refused.
- A ``CancelRequest`` passes only for a session this gate admitted (its ``BackendKeyData``
  was seen), so a sandbox cannot cancel anyone else's queries.
- Each admitted session's queries have a wall deadline kept from outside the session:
  work the server has not answered with ``ReadyForQuery`` ``statement_s`` after it began
  (a simple query, or an extended-protocol batch up to its ``Sync``; in a pipeline, each
  batch from when the one before ended), whatever ``statement_timeout`` the session set
  for itself, is cancelled, and after ``grace_s`` more the session is closed. A
  client that goes away while its query runs has that query cancelled too.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = [
    "CANCEL_REQUEST",
    "GSSENC_REQUEST",
    "PROTOCOL_3",
    "SSL_REQUEST",
    "PgAccess",
    "PgGate",
    "error_response",
]

PROTOCOL_3 = 196608  # 3.0
SSL_REQUEST = 80877103
GSSENC_REQUEST = 80877104
CANCEL_REQUEST = 80877102
_MAX_STARTUP = 10_000  # libpq's own limit on a startup packet
_BUF = 1 << 16
_LENGTH = struct.Struct("!I")


@dataclass(frozen=True)
class PgAccess:
    """Who may pass a gate: one login role on one database, and a statement deadline.

    ``statement_s`` is the wall time one query may run before the gate cancels it (None:
    no deadline); ``grace_s`` how long a cancelled query may take to stop before the gate
    closes the session.
    """

    role: str
    database: str
    statement_s: float | None = 60.0
    grace_s: float = 2.0


def error_response(message: str, code: str = "28000") -> bytes:
    """A FATAL ``ErrorResponse`` message carrying ``message`` and SQLSTATE ``code``."""
    fields = b""
    for tag, value in ((b"S", "FATAL"), (b"V", "FATAL"), (b"C", code), (b"M", message)):
        fields += tag + value.encode("utf-8", "replace").replace(b"\0", b"") + b"\0"
    fields += b"\0"
    return b"E" + struct.pack("!I", len(fields) + 4) + fields


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    out = b""
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("closed during the startup message")
        out += chunk
    return out


def _parameters(body: bytes) -> dict[str, str] | None:
    r"""The startup message's ``key\0value\0…\0`` pairs, or None when malformed."""
    if not body.endswith(b"\0"):
        return None
    pairs = body[:-1]  # the list ends with an empty name
    if not pairs:
        return {}
    if not pairs.endswith(b"\0"):
        return None
    parts = pairs[:-1].split(b"\0")
    if len(parts) % 2:
        return None
    try:
        words = [p.decode("utf-8") for p in parts]
    except UnicodeDecodeError:
        return None
    return dict(zip(words[::2], words[1::2], strict=True))


class _Frames:
    """Splits one direction of a PostgreSQL stream (after startup) into messages.

    ``on_message(type, body)`` is called for each message of the types in ``kinds``;
    ``body`` is given only for the types in ``bodies`` (None otherwise), so large rows are
    never copied.
    """

    def __init__(
        self, on_message: Callable[[bytes, bytes | None], None], kinds: bytes, bodies: bytes
    ) -> None:
        self._on = on_message
        self._kinds = kinds
        self._bodies = bodies
        self._head = b""
        self._left = 0
        self._type = b""
        self._body: bytearray | None = None

    @property
    def at_boundary(self) -> bool:
        """Whether everything fed so far ends with a whole message."""
        return not self._left and not self._head

    def feed(self, data: bytes) -> None:
        """Account for ``data``, the next bytes of the stream, calling back per message."""
        i, n = 0, len(data)
        unpack = _LENGTH.unpack_from
        while i < n:
            if self._left:
                take = min(self._left, n - i)
                if self._body is not None:
                    self._body += data[i : i + take]
                self._left -= take
                i += take
                if not self._left and self._body is not None:
                    self._on(self._type, bytes(self._body))
                    self._body = None
                continue
            if not self._head and i + 5 <= n:  # the common case: a whole header at hand
                kind, length = data[i : i + 1], unpack(data, i + 1)[0]
                i += 5
            else:
                take = min(5 - len(self._head), n - i)
                self._head += data[i : i + take]
                i += take
                if len(self._head) < 5:
                    continue
                kind, length = self._head[:1], unpack(self._head, 1)[0]
                self._head = b""
            if length < 4:
                raise ConnectionError(f"malformed message length {length}")
            self._type = kind
            self._left = length - 4
            if kind not in self._kinds:
                continue
            if kind in self._bodies and self._left:
                self._body = bytearray()
            else:
                self._on(kind, None if self._left else b"")


class _Session:
    """One admitted connection: its cancel key and whether a query is running."""

    def __init__(self) -> None:
        self.key: bytes | None = None  # pid + secret, as BackendKeyData carried them
        self.busy_since: float | None = None
        self.pending = 0  # ReadyForQuery answers still owed (a pipeline owes several)
        self.lock = threading.Lock()  # pending and busy_since change from both directions
        self.cancelled = False
        self.killed = False  # closed by the gate: the query did not stop when cancelled
        self.closed = threading.Event()


class PgGate:
    """Admits one role on one database to ``host:port``; see the module docstring.

    One gate serves all connections of one forwarder (cancel keys are shared between them).
    ``refusals`` keeps what each refused client asked for, for logs and tests.
    """

    def __init__(self, access: PgAccess, host: str, port: int, *, timeout_s: float = 30.0):
        self.access = access
        self.host = host
        self.port = port
        self.timeout_s = timeout_s
        self.refusals: list[str] = []
        self.cancels_sent = 0
        self.closed_sessions = 0
        self._keys: set[bytes] = set()
        self._lock = threading.Lock()

    # -- the first bytes ---------------------------------------------------------------

    def _refuse(self, client: socket.socket, why: str) -> None:
        with self._lock:
            self.refusals.append(why)
        with contextlib.suppress(OSError):
            client.sendall(error_response(f"lhbench: {why}"))

    def _startup(self, client: socket.socket) -> bytes | None:
        """The client's startup message if it may pass, after SSL/GSS negotiation."""
        for _ in range(4):  # at most an SSLRequest and a GSSENCRequest come first
            length, code = struct.unpack("!II", _recv_exact(client, 8))
            if length < 8 or length > _MAX_STARTUP:
                self._refuse(client, f"malformed startup message (length {length})")
                return None
            if code in (SSL_REQUEST, GSSENC_REQUEST) and length == 8:
                client.sendall(b"N")  # not offered: the client goes on in the clear
                continue
            rest = _recv_exact(client, length - 8)
            if code == CANCEL_REQUEST:
                self._cancel(rest)
                return None
            if code >> 16 != 3:
                self._refuse(client, f"unsupported protocol {code >> 16}.{code & 0xFFFF}")
                return None
            params = _parameters(rest)
            if params is None:
                self._refuse(client, "malformed startup message")
                return None
            why = self._denied(params)
            if why:
                self._refuse(client, why)
                return None
            return struct.pack("!II", length, code) + rest
        self._refuse(client, "too many negotiation requests")
        return None

    def _denied(self, params: dict[str, str]) -> str | None:
        role = params.get("user", "")
        database = params.get("database") or role
        want = self.access
        if "replication" in params and params["replication"].lower() not in ("false", "off", "0"):
            return "replication connections are not allowed through this gate"
        if role != want.role:
            return (
                f"role {role!r} is not allowed here: this sandbox may connect only as "
                f"{want.role!r} to database {want.database!r}"
            )
        if database != want.database:
            return (
                f"database {database!r} is not allowed here: this sandbox may connect only "
                f"to {want.database!r} as {want.role!r}"
            )
        return None

    def _upstream(self) -> socket.socket:
        return socket.create_connection((self.host, self.port), timeout=self.timeout_s)

    def _cancel(self, key: bytes) -> None:
        """Pass a CancelRequest on, only for a session this gate admitted."""
        with self._lock:
            known = key in self._keys
        if not known:
            with self._lock:
                self.refusals.append("cancel request for a session this gate did not admit")
            return
        self._send_cancel(key)

    def _send_cancel(self, key: bytes) -> None:
        try:
            with self._upstream() as up:
                # counted before it is sent: the server may cancel the query, and its client
                # see the error, before this thread runs again
                with self._lock:
                    self.cancels_sent += 1
                try:
                    up.sendall(struct.pack("!II", 8 + len(key), CANCEL_REQUEST) + key)
                except OSError:
                    with self._lock:
                        self.cancels_sent -= 1
                    raise
                # the server closes the connection once it has read the request
                up.settimeout(self.timeout_s)
                with contextlib.suppress(OSError):
                    up.recv(1)
        except OSError:
            pass

    # -- an admitted session -----------------------------------------------------------

    def handle(self, client: socket.socket, idle_s: float) -> None:
        """Serve one client connection to the end (refused, cancelled or piped)."""
        try:
            client.settimeout(self.timeout_s)
            try:
                startup = self._startup(client)
            except (OSError, ConnectionError, struct.error):
                startup = None
            if startup is None:
                return
            try:
                upstream = self._upstream()
            except OSError as exc:
                self._refuse(client, f"the database server cannot be reached: {exc}")
                return
            upstream.settimeout(idle_s)
            client.settimeout(idle_s)
            upstream.sendall(startup)
            self._pipe(client, upstream)
        finally:
            with contextlib.suppress(OSError):
                client.close()

    def _pipe(self, client: socket.socket, upstream: socket.socket) -> None:
        session = _Session()

        def from_client(kind: bytes, _body: bytes | None) -> None:
            # a simple query, a Sync (extended protocol) or a function call is answered
            # with ReadyForQuery; an Execute starts work before its Sync arrives
            with session.lock:
                if kind != b"E":
                    session.pending += 1
                if session.busy_since is None:
                    session.busy_since = time.monotonic()
                    session.cancelled = False

        def from_server(kind: bytes, body: bytes | None) -> None:
            if kind == b"K" and body is not None:
                session.key = body
                with self._lock:
                    self._keys.add(body)
            elif kind == b"Z":
                # each pipelined query gets its own deadline, from when the one before ended
                with session.lock:
                    session.pending = max(0, session.pending - 1)
                    session.busy_since = time.monotonic() if session.pending else None
                    session.cancelled = False

        def one_way(src: socket.socket, dst: socket.socket, frames: _Frames) -> None:
            try:
                while data := src.recv(_BUF):
                    frames.feed(data)
                    dst.sendall(data)
            except (OSError, ConnectionError):
                pass
            finally:
                if session.killed and dst is client and frames.at_boundary:
                    # said between two whole messages, so the client can read it
                    with contextlib.suppress(OSError):
                        dst.sendall(self._killed_message())
                with contextlib.suppress(OSError):
                    dst.shutdown(socket.SHUT_WR)

        down = threading.Thread(
            target=one_way,
            args=(upstream, client, _Frames(from_server, b"KZ", b"K")),
            daemon=True,
            name="lhbench-pg-gate",
        )
        down.start()
        watch = threading.Thread(target=self._watch, args=(session, client, upstream), daemon=True)
        watch.start()
        one_way(client, upstream, _Frames(from_client, b"QESF", b""))
        # the client is gone (or said Terminate): a query it left running is cancelled
        if session.busy_since is not None and session.key is not None and not session.cancelled:
            session.cancelled = True
            self._send_cancel(session.key)
        down.join(timeout=self.access.grace_s + 5)
        session.closed.set()
        watch.join(timeout=1)
        for s in (client, upstream):
            with contextlib.suppress(OSError):
                s.close()
        if session.key is not None:
            with self._lock:
                self._keys.discard(session.key)

    def _watch(self, session: _Session, client: socket.socket, upstream: socket.socket) -> None:
        """Cancel a query past the deadline; close the session if it does not stop."""
        limit = self.access.statement_s
        if limit is None:
            return
        while not session.closed.wait(0.1):
            since = session.busy_since
            if since is None:
                continue
            ran = time.monotonic() - since
            if ran > limit and not session.cancelled and session.key is not None:
                session.cancelled = True
                self._send_cancel(session.key)
            elif ran > limit + self.access.grace_s:
                with self._lock:
                    self.closed_sessions += 1
                session.killed = True
                for s in (upstream, client):
                    with contextlib.suppress(OSError):
                        s.shutdown(socket.SHUT_RD)
                with contextlib.suppress(OSError):
                    upstream.shutdown(socket.SHUT_WR)
                return

    def _killed_message(self) -> bytes:
        return error_response(
            f"lhbench: the query ran past the {self.access.statement_s:g} s limit and did "
            "not stop when cancelled; the session is closed",
            "57014",
        )
