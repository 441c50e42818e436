"""Replay a trajectory's SQL into a fresh SQLite database: run inside the sandbox.

    python -I -S path/to/replay_worker.py DB DUMP STATEMENTS.json

Loads the task's dump, then each statement the agent ran successfully, on a guarded
connection (no ATTACH or VACUUM INTO, no extension loading, bounded values and time), and
prints ``{"applied": n, "skipped": [...]}``. The sandbox lets it write only the database's
directory.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

if __package__:
    from lhbench.envs.sqlite_guard import guarded_connection, reset_deadline
else:
    # run by path (python -I -S replay_worker.py): the guard beside it, without importing
    # lhbench.envs (whose imports cost a hundred times the replay)
    import importlib.util

    _spec = importlib.util.spec_from_file_location(
        "sqlite_guard", Path(__file__).with_name("sqlite_guard.py")
    )
    assert _spec is not None and _spec.loader is not None
    _guard = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_guard)
    guarded_connection, reset_deadline = _guard.guarded_connection, _guard.reset_deadline


def main(argv: list[str]) -> int:
    """Run the replay; exit 2 when the dump itself does not load."""
    db, dump, statements = Path(argv[0]), Path(argv[1]), Path(argv[2])
    conn = guarded_connection(db, read_only=False, create=True, timeout_s=30.0)
    try:
        try:
            conn.executescript(dump.read_text(encoding="utf-8"))
        except sqlite3.Error as exc:
            print(json.dumps({"error": f"the task's dump does not load: {exc}"}))
            return 2
        applied, skipped = 0, []
        for stmt in json.loads(statements.read_text(encoding="utf-8")):
            reset_deadline(conn)
            try:
                conn.execute(stmt)
                applied += 1
            except sqlite3.Error as exc:
                skipped.append(f"{stmt[:60]}: {exc}")
        conn.commit()
    finally:
        conn.close()
    print(json.dumps({"applied": applied, "skipped": skipped}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
