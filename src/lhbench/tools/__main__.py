"""Run a judge tool server over stdio: ``python -m lhbench.tools fs|sql|trajectory ARG``."""

from __future__ import annotations

import sys
from pathlib import Path


def main() -> None:
    """Start the named server on stdio."""
    if len(sys.argv) != 3 or sys.argv[1] not in ("fs", "sql", "trajectory"):
        print(
            "usage: python -m lhbench.tools fs ROOT | sql URL | trajectory FILE.json",
            file=sys.stderr,
        )
        sys.exit(2)
    kind, arg = sys.argv[1], sys.argv[2]
    if kind == "fs":
        from lhbench.tools.fs_server import build_fs_server

        server = build_fs_server(Path(arg))
    elif kind == "sql":
        from lhbench.tools.sql_server import build_sql_server

        server = build_sql_server(arg)
    else:
        from lhbench.tools.trajectory_server import build_trajectory_server

        server = build_trajectory_server(Path(arg))
    server.run()


if __name__ == "__main__":
    main()
