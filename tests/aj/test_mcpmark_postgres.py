"""MCPMark PostgreSQL runs, as its servers log them, replayed on a pg_dump-shaped database.

The shapes are the published ones: a plain ``pg_dump`` (comments holding ``;`` and quotes,
``COPY … FROM stdin`` blocks, the ``\\restrict`` lines of recent versions); postgres-mcp's
``execute_sql`` (``sql``; a failed statement reported as ``Error: …`` text), Supabase's
``apply_migration`` (``name``, ``query``; ``isError`` set) and InsForge's ``run-raw-sql``.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from lhbench.api import judge_states_async
from lhbench.config import Settings
from lhbench.ingest.mcpmark import import_mcpmark
from lhbench.store import Store
from tests.aj.mcpmark_logs import items, layout, meta

PG_URL = os.environ.get("LHBENCH_TEST_PG_URL")
pytestmark = pytest.mark.skipif(not PG_URL, reason="LHBENCH_TEST_PG_URL is not set")

DUMP = """--
-- PostgreSQL database dump
--

\\restrict Qx7ab

SET statement_timeout = 0;
SELECT pg_catalog.set_config('search_path', '', false);

--
-- Name: products; Type: TABLE; Schema: public; Owner: -
--

CREATE TABLE public.products (
    id integer NOT NULL,
    name text NOT NULL,
    price numeric(10,2) NOT NULL
);

--
-- Data for Name: products; Type: TABLE DATA; Schema: public; Owner: -
--

COPY public.products (id, name, price) FROM stdin;
1\tlamp\t20.00
2\tdesk\t150.00
3\tchair\t80.00
\\.

-- the shop's note: don't drop it; ever
ALTER TABLE ONLY public.products ADD CONSTRAINT products_pkey PRIMARY KEY (id);

\\unrestrict Qx7ab
"""

RAISE_FN = (
    "CREATE FUNCTION public.raised(p numeric) RETURNS numeric AS $$\n"
    "BEGIN\n  RETURN round(p * 1.1, 2); -- ten percent; rounded\nEND;\n$$ LANGUAGE plpgsql;\n"
    "UPDATE products SET price = public.raised(price);"
)


def _run(*calls: tuple[str, dict[str, Any], str, bool], mcp: str, success: bool) -> Any:
    return items(*calls), meta("shop__raise_prices", mcp, success)


def _labels(tmp: Path, src: Path) -> dict[str, tuple[bool | None, str]]:
    import_mcpmark(src, tmp / "p")
    with Store.open(f"sqlite:///{tmp / 's.db'}") as store:
        asyncio.run(
            judge_states_async(
                store=store,
                settings=Settings(home=tmp / "home"),
                pack=str(tmp / "p"),
                judge=None,
                postgres_url=PG_URL,
            )
        )
        labels = {lab.run_id: lab for lab in store.list_labels()}
        return {
            r.metadata["mcpmark_log"].split("/")[0]: (
                labels[r.id].passed,
                labels[r.id].error or labels[r.id].detail,
            )
            for r in store.list_runs()
        }


def _shop(tmp: Path, logs: dict[str, Any]) -> Path:
    src = layout(tmp, {f"{k}/run-1/shop__raise_prices": v for k, v in logs.items()}, postgres=True)
    (src / "postgres_state" / "shop.sql").write_text(DUMP)
    return src


def test_each_servers_calls_replay_as_the_server_ran_them(tmp_path: Path) -> None:
    src = _shop(
        tmp_path,
        {
            # Supabase: a migration with a dollar-quoted body; a failed one (isError) is not run
            "supabase": _run(
                (
                    "apply_migration",
                    {"name": "zero", "query": "UPDATE products SET price = 0"},
                    '{"error":{"name":"PgMetaDatabaseError"}}',
                    True,
                ),
                (
                    "apply_migration",
                    {"name": "raise", "query": RAISE_FN},
                    '{"success":true}',
                    False,
                ),
                mcp="supabase",
                success=True,
            ),
            # postgres-mcp: '%' and ':name' are SQL here, not parameters; its failures are text
            "crystaldba": _run(
                (
                    "execute_sql",
                    {"sql": "UPDATE products SET price = price * 100"},
                    "Error: deadlock detected",
                    False,
                ),
                (
                    "execute_sql",
                    {
                        "sql": "UPDATE products SET price = round(price * 1.1, 2) "
                        "WHERE name LIKE '%' AND name <> ':none'"
                    },
                    "[]",
                    False,
                ),
                mcp="postgres",
                success=True,
            ),
            # InsForge's tool
            "insforge": _run(
                (
                    "run-raw-sql",
                    {"query": "BEGIN; UPDATE products SET price = price * 1.1; COMMIT;"},
                    "SQL query executed completed successfully",
                    False,
                ),
                mcp="insforge",
                success=True,
            ),
            # a call that succeeded for the agent fails here (no such role): a replay gap
            "gap": _run(
                ("execute_sql", {"sql": "SET ROLE postgres_admin"}, "[]", False),
                ("execute_sql", {"sql": "UPDATE products SET price = price * 1.1"}, "[]", False),
                mcp="postgres",
                success=True,
            ),
        },
    )
    got = _labels(tmp_path, src)
    assert got["supabase"][0] is True, got
    assert got["crystaldba"][0] is True, got
    assert got["insforge"][0] is True, got
    assert got["gap"][0] is None and got["gap"][1].startswith("replay incomplete"), got
    assert "postgres_admin" in got["gap"][1]


def test_a_check_that_needs_to_write_is_undecided_not_failed(tmp_path: Path) -> None:
    src = _shop(
        tmp_path,
        {
            "crystaldba": _run(
                ("execute_sql", {"sql": "SELECT 1"}, "[]", False), mcp="postgres", success=True
            )
        },
    )
    # as MCPMark's RLS checks do: make a role and grant it, as the database's owner would
    (src / "tasks/postgres/standard/shop/raise_prices/verify.py").write_text(
        "import os, sys, psycopg\n"
        "try:\n"
        "    with psycopg.connect(host=os.environ['POSTGRES_HOST'],"
        " port=os.environ['POSTGRES_PORT'], dbname=os.environ['POSTGRES_DATABASE'],"
        " user=os.environ['POSTGRES_USERNAME'], password=os.environ['POSTGRES_PASSWORD'],"
        " autocommit=True) as c:\n"
        "        c.execute('GRANT SELECT ON products TO PUBLIC')\n"
        "except Exception as e:\n"
        "    print(f'Error during verification: {e}'); sys.exit(1)\n"
        "print('ok'); sys.exit(0)\n"
    )
    [(passed, why)] = _labels(tmp_path, src).values()
    assert passed is None, why
    assert "lhbench's checks read only" in why and "read-only transaction" in why
