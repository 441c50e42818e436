"""Run a tool server over stdio.

``python -m lhbench.tools state [--root DIR] [--db URL] [--trajectory FILE]`` (the judge's
tools over one final state), or one kind alone: ``fs ROOT``, ``sql URL``, ``trajectory FILE``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main() -> None:
    """Start the named server on stdio; a refused target (e.g. a writable role) exits 2."""
    from lhbench.errors import LhbenchError

    try:
        _serve()
    except LhbenchError as exc:
        print(f"lhbench.tools: {exc}", file=sys.stderr)
        sys.exit(2)


def _serve() -> None:
    ap = argparse.ArgumentParser(prog="python -m lhbench.tools")
    sub = ap.add_subparsers(dest="kind", required=True)
    from lhbench.tools.state_server import state_arguments

    state_arguments(
        sub.add_parser("state", help="files or database, and trajectory, in one server")
    )
    for kind, meta in (("fs", "ROOT"), ("sql", "URL"), ("trajectory", "FILE")):
        sub.add_parser(kind).add_argument("target", metavar=meta)
    args = ap.parse_args()
    if args.kind == "state":
        from lhbench.tools.state_server import build_state_server

        if args.root is None and args.db is None and args.trajectory is None:
            ap.error("state: give at least one of --root, --db, --trajectory")
        server = build_state_server(root=args.root, db_url=args.db, trajectory=args.trajectory)
    elif args.kind == "fs":
        from lhbench.tools.fs_server import build_fs_server

        server = build_fs_server(Path(args.target))
    elif args.kind == "sql":
        from lhbench.tools.sql_server import build_sql_server

        server = build_sql_server(args.target)
    else:
        from lhbench.tools.trajectory_server import build_trajectory_server

        server = build_trajectory_server(Path(args.target))
    server.run()


if __name__ == "__main__":
    main()
    sys.exit(0)
