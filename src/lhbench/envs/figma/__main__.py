"""``python -m lhbench.envs.figma serve``: the Figma fixture server as its own process.

Prints the base URL on its first line, then serves until SIGTERM/SIGINT::

    python -m lhbench.envs.figma serve [--store DIR|bundled:figma-mini] [--port 0]
        [--token T] [--rate-limit 10/min | capacity=5,per_minute=10,schedule=3;7]
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from lhbench.envs.figma.ratelimit import parse_rate_limit
from lhbench.envs.figma.server import FigmaFixtureServer
from lhbench.envs.figma.store import FixtureStore
from lhbench.envs.figma.stores import store_path


def main(argv: list[str] | None = None) -> int:
    """Parse flags, start the server, print its URL, wait for a signal."""
    ap = argparse.ArgumentParser(prog="python -m lhbench.envs.figma", description=__doc__)
    sub = ap.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve a fixture store over Figma's REST API")
    serve.add_argument("--store", default="bundled:figma-mini")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=0)
    serve.add_argument("--token", default=None, help="the X-Figma-Token to require")
    serve.add_argument("--rate-limit", default="off")
    args = ap.parse_args(argv)
    try:
        limit = parse_rate_limit(args.rate_limit)
        root = store_path(args.store)
    except ValueError as exc:
        ap.error(str(exc))
    store = FixtureStore(root)
    if not store.keys():
        ap.error(f"--store {args.store}: no <file_key>/file.json under {root}")
    srv = FigmaFixtureServer(
        store, token=args.token, rate_limit=limit, host=args.host, port=args.port
    ).start()
    print(srv.url, flush=True)
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    done.wait()
    srv.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
