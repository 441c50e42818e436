"""Generate the bundled ``aj-ds-mini`` pack (Agent-as-a-Judge, data systems, mini).

Run from the repository root: ``uv run python scripts/make_aj_ds_mini.py``. It writes
``src/lhbench/packs/data/aj-ds-mini`` from the task definitions below: each task's
initial state (a directory, or a SQL dump), its verify script, and four or more
trajectories in lhbench's generic JSONL form. The file name of a trajectory says what
its author intended (``pass-*`` or ``fail-*``); the label itself always comes from
running the verify script on the replayed state (the tests check the two agree).
Every trajectory ends with the agent claiming success, so only the final state tells.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

OUT = Path("src/lhbench/packs/data/aj-ds-mini")

VERIFY_FS_HEAD = """import argparse, json, sys
from pathlib import Path
ap = argparse.ArgumentParser(); ap.add_argument("--root", required=True); root = Path(ap.parse_args().root)
def done(ok, detail):
    print(json.dumps({"detail": detail})); sys.exit(0 if ok else 1)
"""
VERIFY_SQL_HEAD = """import argparse, json, sys
from lhbench.envs.checks import sql_rows
ap = argparse.ArgumentParser(); ap.add_argument("--db", required=True); url = ap.parse_args().db
def rows(q): return sql_rows(url, q)
def done(ok, detail):
    print(json.dumps({"detail": detail})); sys.exit(0 if ok else 1)
"""


def w(path: str, content: str) -> tuple[str, dict]:
    return ("write_file", {"path": path, "content": content})


def mv(src: str, dst: str) -> tuple[str, dict]:
    return ("move_file", {"source": src, "destination": dst})


def mkdir(path: str) -> tuple[str, dict]:
    return ("create_directory", {"path": path})


def edit(path: str, old: str, new: str) -> tuple[str, dict]:
    return ("edit_file", {"path": path, "edits": [{"oldText": old, "newText": new}]})


def sql(q: str) -> tuple[str, dict]:
    return ("execute_sql", {"sql": q})


NAMES = ["mara", "alex", "zoe", "ben", "chloe"]
USERS_CSV = "id,name\n1,ann\n2,bob\n1,ann\n3,cy\n2,bob\n4,dee\n"

FS_TASKS = [
    {
        "id": "fs-move-logs",
        "title": "Move log files",
        "instruction": "Move every .log file in the project root into the logs/ directory.",
        "files": {
            "a.log": "alpha\n",
            "b.log": "beta\n",
            "c.log": "gamma\n",
            "notes.txt": "keep me\n",
            "logs/.keep": "",
        },
        "verify": """moved = sorted(p.name for p in (root / "logs").glob("*.log"))
left = sorted(p.name for p in root.glob("*.log"))
done(moved == ["a.log", "b.log", "c.log"] and not left and (root / "notes.txt").exists(), f"in logs/: {moved}; left: {left}")""",
        "trajectories": {
            "pass-one-by-one": [
                mv("a.log", "logs/a.log"),
                mv("b.log", "logs/b.log"),
                mv("c.log", "logs/c.log"),
            ],
            "pass-after-error": [
                mv(
                    "a.log",
                    "log/a.log",
                ),
                ("error", "destination directory log/ does not exist"),
                mv("a.log", "logs/a.log"),
                mv("b.log", "logs/b.log"),
                mv("c.log", "logs/c.log"),
            ],
            "fail-partial-move": [mv("a.log", "logs/a.log"), mv("b.log", "logs/b.log")],
            "fail-wrong-directory": [
                mkdir("log"),
                mv("a.log", "log/a.log"),
                mv("b.log", "log/b.log"),
                mv("c.log", "log/c.log"),
            ],
        },
    },
    {
        "id": "fs-sort-names",
        "title": "Sort names",
        "instruction": "Write sorted.txt with the names from names.txt in ascending alphabetical order, one per line.",
        "files": {"names.txt": "\n".join(NAMES) + "\n"},
        "verify": """p = root / "sorted.txt"
got = p.read_text().split() if p.exists() else None
done(got == sorted((root / "names.txt").read_text().split()), f"sorted.txt: {got}")""",
        "trajectories": {
            "pass-sorted": [w("sorted.txt", "\n".join(sorted(NAMES)) + "\n")],
            "pass-rewritten": [
                w("sorted.txt", "alex\nben\n"),
                w("sorted.txt", "\n".join(sorted(NAMES)) + "\n"),
            ],
            "fail-descending": [w("sorted.txt", "\n".join(sorted(NAMES, reverse=True)) + "\n")],
            "fail-unsorted-copy": [w("sorted.txt", "\n".join(NAMES) + "\n")],
        },
    },
    {
        "id": "fs-config-port",
        "title": "Change the server port",
        "instruction": "In config.ini, change the server's port to 8080.",
        "files": {
            "config.ini": "[server]\nhost = 0.0.0.0\nport = 8000\n\n[metrics]\nport = 9000\n"
        },
        "verify": """import configparser
c = configparser.ConfigParser(); c.read(root / "config.ini")
done(c["server"]["port"] == "8080" and c["metrics"]["port"] == "9000", f"server={c['server']['port']} metrics={c['metrics']['port']}")""",
        "trajectories": {
            "pass-edit": [edit("config.ini", "port = 8000", "port = 8080")],
            "pass-rewrite": [
                w("config.ini", "[server]\nhost = 0.0.0.0\nport = 8080\n\n[metrics]\nport = 9000\n")
            ],
            "fail-wrong-section": [edit("config.ini", "port = 9000", "port = 8080")],
            "fail-typo-port": [edit("config.ini", "port = 8000", "port = 8008")],
        },
    },
    {
        "id": "fs-rename-dates",
        "title": "Rename dated reports",
        "instruction": "Rename each report_YYYY-MM-DD.txt to YYYY-MM-DD_report.txt, keeping the date.",
        "files": {
            "report_2024-01-05.txt": "q1\n",
            "report_2024-02-29.txt": "leap\n",
            "report_2024-03-31.txt": "q1 end\n",
        },
        "verify": """names = sorted(p.name for p in root.glob("*.txt"))
done(names == ["2024-01-05_report.txt", "2024-02-29_report.txt", "2024-03-31_report.txt"], f"files: {names}")""",
        "trajectories": {
            "pass-renamed": [
                mv(f"report_{d}.txt", f"{d}_report.txt")
                for d in ("2024-01-05", "2024-02-29", "2024-03-31")
            ],
            "pass-other-order": [
                mv(f"report_{d}.txt", f"{d}_report.txt")
                for d in ("2024-03-31", "2024-01-05", "2024-02-29")
            ],
            "fail-off-by-one-date": [
                mv("report_2024-01-05.txt", "2024-01-05_report.txt"),
                mv("report_2024-02-29.txt", "2024-03-01_report.txt"),
                mv("report_2024-03-31.txt", "2024-03-31_report.txt"),
            ],
            "fail-one-left": [
                mv("report_2024-01-05.txt", "2024-01-05_report.txt"),
                mv("report_2024-02-29.txt", "2024-02-29_report.txt"),
            ],
        },
    },
    {
        "id": "fs-create-readme",
        "title": "Write the docs README",
        "instruction": "Create docs/README.md whose first line is '# Atlas' and which has a '## Usage' section.",
        "files": {"docs/.keep": "", "pyproject.toml": '[project]\nname = "atlas"\n'},
        "verify": """p = root / "docs" / "README.md"
text = p.read_text() if p.exists() else ""
lines = text.splitlines()
done(bool(lines) and lines[0].strip() == "# Atlas" and any(l.strip() == "## Usage" for l in lines), f"docs/README.md: {lines[:3]}")""",
        "trajectories": {
            "pass-readme": [
                w("docs/README.md", "# Atlas\n\nA toolkit.\n\n## Usage\n\n    atlas run\n")
            ],
            "pass-two-steps": [
                w("docs/README.md", "# Atlas\n"),
                edit("docs/README.md", "# Atlas\n", "# Atlas\n\n## Usage\n\nRun `atlas`.\n"),
            ],
            "fail-no-usage": [w("docs/README.md", "# Atlas\n\nA toolkit.\n\n## Install\n")],
            "fail-wrong-place": [w("README.md", "# Atlas\n\n## Usage\n")],
        },
    },
    {
        "id": "fs-dedupe-csv",
        "title": "Remove duplicate rows",
        "instruction": "Write users_clean.csv: users.csv without duplicate rows, header kept, first occurrences in their original order.",
        "files": {"users.csv": USERS_CSV},
        "verify": """p = root / "users_clean.csv"
got = p.read_text().splitlines() if p.exists() else None
done(got == ["id,name", "1,ann", "2,bob", "3,cy", "4,dee"], f"users_clean.csv: {got}")""",
        "trajectories": {
            "pass-deduped": [w("users_clean.csv", "id,name\n1,ann\n2,bob\n3,cy\n4,dee\n")],
            "pass-no-trailing-newline": [
                w("users_clean.csv", "id,name\n1,ann\n2,bob\n3,cy\n4,dee")
            ],
            "fail-header-dropped": [w("users_clean.csv", "1,ann\n2,bob\n3,cy\n4,dee\n")],
            "fail-still-duplicated": [
                w("users_clean.csv", "id,name\n1,ann\n2,bob\n1,ann\n3,cy\n4,dee\n")
            ],
        },
    },
]

SHOP_DUMP = """CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL, price_cents INTEGER NOT NULL);
INSERT INTO products VALUES (1, 'Hamer', 'tools', 1500), (2, 'Saw', 'tools', 2500), (3, 'Lamp', 'home', 4000), (4, 'Rug', 'home', 9000), (5, 'Drill', 'tools', 6000);
CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, last_login TEXT, confirmed_at TEXT);
INSERT INTO users VALUES (1, 'ann', '2023-12-31', '2023-01-02'), (2, 'bob', '2024-01-01', NULL), (3, 'cy', '2024-03-15', '2024-03-01'), (4, 'dee', NULL, NULL), (5, 'eve', '2023-06-30', '2023-06-01');
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL, order_date TEXT NOT NULL, amount_cents INTEGER NOT NULL);
INSERT INTO orders VALUES (1, 1, '2024-01-31', 5000), (2, 2, '2024-02-01', 12000), (3, 1, '2024-02-14', 3000), (4, 3, '2024-02-29', 20000), (5, 4, '2024-03-01', 1000), (6, 4, '2024-03-05', 1000), (7, 4, '2024-03-09', 1000), (8, 5, '2024-03-31', 7000), (9, 2, '2024-01-15', 500);
"""

SQL_TASKS = [
    {
        "id": "sql-raise-prices",
        "title": "Raise tool prices",
        "instruction": "Increase the price of every product in the 'tools' category by 10%.",
        "verify": """got = dict(rows("SELECT id, price_cents FROM products"))
done(got == {1: 1650, 2: 2750, 3: 4000, 4: 9000, 5: 6600}, f"prices: {got}")""",
        "trajectories": {
            "pass-update": [
                sql(
                    "UPDATE products SET price_cents = price_cents * 11 / 10 WHERE category = 'tools'"
                )
            ],
            "pass-per-row": [
                sql("UPDATE products SET price_cents = 1650 WHERE id = 1"),
                sql("UPDATE products SET price_cents = 2750 WHERE id = 2"),
                sql("UPDATE products SET price_cents = 6600 WHERE id = 5"),
            ],
            "fail-all-categories": [sql("UPDATE products SET price_cents = price_cents * 11 / 10")],
            "fail-absolute-ten": [
                sql("UPDATE products SET price_cents = price_cents + 10 WHERE category = 'tools'")
            ],
        },
    },
    {
        "id": "sql-delete-inactive",
        "title": "Delete inactive users",
        "instruction": "Delete users whose last login was before 2024-01-01. Keep users who never logged in.",
        "verify": """got = sorted(r[0] for r in rows("SELECT id FROM users"))
done(got == [2, 3, 4], f"remaining users: {got}")""",
        "trajectories": {
            "pass-delete": [sql("DELETE FROM users WHERE last_login < '2024-01-01'")],
            "pass-by-id": [
                sql("SELECT id, last_login FROM users"),
                sql("DELETE FROM users WHERE id IN (1, 5)"),
            ],
            "fail-off-by-one-date": [sql("DELETE FROM users WHERE last_login <= '2024-01-01'")],
            "fail-deleted-never-logged-in": [
                sql("DELETE FROM users WHERE last_login < '2024-01-01' OR last_login IS NULL")
            ],
        },
    },
    {
        "id": "sql-top-customers",
        "title": "Top customers",
        "instruction": "Create a table top_customers(customer_id, total_cents) with the 3 customers who spent the most, highest first (rank column 'rank', 1 = highest).",
        "verify": """got = rows("SELECT rank, customer_id, total_cents FROM top_customers ORDER BY rank")
done([tuple(r) for r in got] == [(1, 3, 20000), (2, 2, 12500), (3, 1, 8000)], f"top_customers: {got}")""",
        "trajectories": {
            "pass-create": [
                sql(
                    "CREATE TABLE top_customers (rank INTEGER, customer_id INTEGER, total_cents INTEGER)"
                ),
                sql("INSERT INTO top_customers VALUES (1, 3, 20000), (2, 2, 12500), (3, 1, 8000)"),
            ],
            "pass-after-error": [
                sql("CREATE TABLE top_customers AS SELECT FROM orders"),
                ("error", "syntax error at or near FROM"),
                sql(
                    "CREATE TABLE top_customers (rank INTEGER, customer_id INTEGER, total_cents INTEGER)"
                ),
                sql("INSERT INTO top_customers VALUES (1, 3, 20000), (2, 2, 12500), (3, 1, 8000)"),
            ],
            "fail-ascending": [
                sql(
                    "CREATE TABLE top_customers (rank INTEGER, customer_id INTEGER, total_cents INTEGER)"
                ),
                sql("INSERT INTO top_customers VALUES (1, 4, 3000), (2, 5, 7000), (3, 1, 8000)"),
            ],
            "fail-by-order-count": [
                sql(
                    "CREATE TABLE top_customers (rank INTEGER, customer_id INTEGER, total_cents INTEGER)"
                ),
                sql("INSERT INTO top_customers VALUES (1, 4, 3000), (2, 1, 8000), (3, 2, 12500)"),
            ],
        },
    },
    {
        "id": "sql-add-column",
        "title": "Add a verified flag",
        "instruction": "Add an integer column email_verified (default 0) to users and set it to 1 for users with a confirmed_at date.",
        "verify": """try:
    got = dict(rows("SELECT id, email_verified FROM users"))
except Exception as exc:
    done(False, f"no email_verified column: {str(exc).splitlines()[0]}")
done(got == {1: 1, 2: 0, 3: 1, 4: 0, 5: 1}, f"email_verified: {got}")""",
        "trajectories": {
            "pass-add-and-set": [
                sql("ALTER TABLE users ADD COLUMN email_verified INTEGER DEFAULT 0"),
                sql("UPDATE users SET email_verified = 1 WHERE confirmed_at IS NOT NULL"),
            ],
            "pass-explicit-zero": [
                sql("ALTER TABLE users ADD COLUMN email_verified INTEGER DEFAULT 0"),
                sql("UPDATE users SET email_verified = 0"),
                sql("UPDATE users SET email_verified = 1 WHERE confirmed_at IS NOT NULL"),
            ],
            "fail-not-set": [sql("ALTER TABLE users ADD COLUMN email_verified INTEGER DEFAULT 0")],
            "fail-set-all": [
                sql("ALTER TABLE users ADD COLUMN email_verified INTEGER DEFAULT 0"),
                sql("UPDATE users SET email_verified = 1"),
            ],
        },
    },
    {
        "id": "sql-fix-typo",
        "title": "Fix a product name",
        "instruction": "The product 'Hamer' is misspelled; rename it to 'Hammer'.",
        "verify": """names = sorted(r[0] for r in rows("SELECT name FROM products"))
done(names == ["Drill", "Hammer", "Lamp", "Rug", "Saw"], f"names: {names}")""",
        "trajectories": {
            "pass-update": [sql("UPDATE products SET name = 'Hammer' WHERE name = 'Hamer'")],
            "pass-by-id": [
                sql("SELECT id FROM products WHERE name = 'Hamer'"),
                sql("UPDATE products SET name = 'Hammer' WHERE id = 1"),
            ],
            "fail-duplicate-row": [sql("INSERT INTO products VALUES (6, 'Hammer', 'tools', 1500)")],
            "fail-wrong-row": [sql("UPDATE products SET name = 'Hammer' WHERE id = 2")],
        },
    },
    {
        "id": "sql-monthly-summary",
        "title": "Monthly sales",
        "instruction": "Create a table monthly_sales(month, total_cents) with one row per month ('YYYY-MM') of orders.",
        "verify": """got = sorted(tuple(r) for r in rows("SELECT month, total_cents FROM monthly_sales"))
done(got == [("2024-01", 5500), ("2024-02", 35000), ("2024-03", 10000)], f"monthly_sales: {got}")""",
        "trajectories": {
            "pass-create-as": [
                sql(
                    "CREATE TABLE monthly_sales AS SELECT substr(order_date, 1, 7) AS month, SUM(amount_cents) AS total_cents FROM orders GROUP BY substr(order_date, 1, 7)"
                )
            ],
            "pass-manual": [
                sql("CREATE TABLE monthly_sales (month TEXT, total_cents INTEGER)"),
                sql(
                    "INSERT INTO monthly_sales VALUES ('2024-01', 5500), ('2024-02', 35000), ('2024-03', 10000)"
                ),
            ],
            "fail-month-boundary": [
                sql("CREATE TABLE monthly_sales (month TEXT, total_cents INTEGER)"),
                sql(
                    "INSERT INTO monthly_sales VALUES ('2024-01', 5500), ('2024-02', 15000), ('2024-03', 30000)"
                ),
            ],
            "fail-missing-month": [
                sql("CREATE TABLE monthly_sales (month TEXT, total_cents INTEGER)"),
                sql("INSERT INTO monthly_sales VALUES ('2024-02', 35000), ('2024-03', 10000)"),
            ],
        },
    },
]


def trajectory_lines(task: dict, actions: list) -> list[str]:
    lines = [{"type": "run", "session_id": f"{task['id']}", "model": "fixture"}]
    lines.append({"role": "user", "kind": "message", "content": task["instruction"]})
    n = 0
    for act in actions:
        if act[0] == "error":
            # the previous call failed: rewrite its result
            lines[-1] = {**lines[-1], "is_error": True, "tool_output": act[1]}
            continue
        n += 1
        name, args = act
        cid = f"c{n}"
        lines.append(
            {
                "role": "assistant",
                "kind": "tool_call",
                "tool_name": name,
                "tool_call_id": cid,
                "tool_input": args,
            }
        )
        lines.append(
            {"role": "tool", "kind": "tool_result", "tool_call_id": cid, "tool_output": "ok"}
        )
    lines.append({"role": "assistant", "kind": "message", "content": "Done: the task is complete."})
    lines.append({"type": "end", "status": "completed"})
    return [json.dumps(line) for line in lines]


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    (OUT / "rubrics").mkdir(parents=True)
    (OUT / "pack.yaml").write_text(
        "# Generated by scripts/make_aj_ds_mini.py; edit that script, not these files.\n"
        'id: aj-ds-mini\nversion: "1.0"\nenvironment: mixed\n'
        "description: >-\n  Agent-as-a-Judge sample: 12 filesystem and SQL tasks, each with passing and failing\n"
        "  trajectories; labels come from the tasks' verify scripts on the replayed state.\n"
    )
    (OUT / "README.md").write_text(textwrap.dedent(__doc__ or "").strip() + "\n")
    for task in FS_TASKS + SQL_TASKS:
        d = OUT / "tasks" / task["id"]
        kind = "filesystem" if task["id"].startswith("fs-") else "sql"
        env = {"kind": kind, "verify": "verify.py"}
        if kind == "filesystem":
            for rel, content in task["files"].items():
                p = d / "initial" / rel
                p.parent.mkdir(parents=True, exist_ok=True)
                p.write_text(content)
            env["initial_state"] = "initial"
            (d / "verify.py").write_text(VERIFY_FS_HEAD + task["verify"] + "\n")
        else:
            d.mkdir(parents=True, exist_ok=True)
            (d / "seed.sql").write_text(SHOP_DUMP)
            env["database"] = "seed.sql"
            (d / "verify.py").write_text(VERIFY_SQL_HEAD + task["verify"] + "\n")
        task_yaml = {
            "title": task["title"],
            "instruction": task["instruction"],
            "environment": env,
            "tags": {"category": "data-systems", "subdomain": kind},
        }
        import yaml

        (d / "task.yaml").write_text(yaml.safe_dump(task_yaml, sort_keys=False))
        (d / "trajectories").mkdir()
        for name, actions in task["trajectories"].items():
            (d / "trajectories" / f"{name}.jsonl").write_text(
                "\n".join(trajectory_lines(task, actions)) + "\n"
            )
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
