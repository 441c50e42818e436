"""The in-sandbox half of the network path, and the command's parent.

    python -m lhbench.sandbox.relay --map 127.0.0.1:PORT=/run/lhbench/net/0.sock ... -- CMD...

It listens on each local address, relays connections to the matching Unix socket, runs
CMD as its child, passes on SIGTERM/SIGINT, and exits with CMD's exit code. Standard
library only: it starts inside every networked sandbox.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading

from lhbench.sandbox.forward import pipe

__all__ = ["main"]


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
