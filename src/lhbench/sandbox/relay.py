"""The in-sandbox half of the network path, and the command's parent.

    python -I -S …/lhbench/sandbox/relay.py --map 127.0.0.1:PORT=/run/lhbench/net/0.sock … -- CMD…

It listens on each local address, relays connections to the matching Unix socket, runs
CMD as its child, passes on SIGTERM/SIGINT, and exits with CMD's exit code. Standard
library only, run by path with ``-S`` (:func:`relay_argv`): it starts inside every
networked sandbox, before the command, so it imports nothing of lhbench (as ``-m
lhbench.sandbox.relay`` it imported the ``lhbench.sandbox`` package, asyncio with it:
60 ms against a bare interpreter's 8).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence

__all__ = ["main", "pipe", "relay_argv"]

_BUF = 1 << 16


def relay_argv(maps: Sequence[str], inner: Sequence[str]) -> list[str]:
    """The command that runs ``inner`` behind the relay (``maps``: ``--map`` pairs)."""
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), *maps, "--", *inner]


def pipe(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways between two sockets until either side closes."""

    def one_way(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(_BUF):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)

    t = threading.Thread(target=one_way, args=(b, a), daemon=True)
    t.start()
    one_way(a, b)
    t.join()
    for s in (a, b):
        with contextlib.suppress(OSError):
            s.close()


def _listen(host: str, port: int, unix_path: str) -> None:
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((host, port))
    server.listen(64)

    def serve() -> None:
        while True:
            client, _ = server.accept()
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                upstream.connect(unix_path)
            except OSError:
                client.close()
                upstream.close()
                continue
            threading.Thread(target=pipe, args=(client, upstream), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    """Parse ``--map`` pairs, start the listeners, run the command."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--" not in args:
        print("usage: relay --map HOST:PORT=SOCKET ... -- CMD ...", file=sys.stderr)
        return 2
    split = args.index("--")
    opts, cmd = args[:split], args[split + 1 :]
    for i in range(0, len(opts), 2):
        if opts[i] != "--map" or i + 1 >= len(opts):
            print(f"relay: unexpected argument {opts[i]!r}", file=sys.stderr)
            return 2
        addr, _, path = opts[i + 1].partition("=")
        host, _, port = addr.rpartition(":")
        _listen(host, int(port), path)
    proc = subprocess.Popen(cmd)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda s, _f: proc.send_signal(s))
    code = proc.wait()
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    os._exit(main())
