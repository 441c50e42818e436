"""``lhbench doctor``'s PostgreSQL probes: how the server lets roles in, and that the gate holds.

Run against the server lhbench replays SQL tasks on (``aj_postgres_url`` or ``--postgres``),
as its admin URL gives it: a throwaway database and read-only role are made, probed through
a real gate (:class:`~lhbench.sandbox.Forwarder` with a :class:`~lhbench.sandbox.PgAccess`)
and dropped.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from pathlib import Path

from sqlalchemy.engine import make_url

__all__ = ["postgres_probes"]

Probe = tuple[str, bool, str]


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[-1][:200]


def postgres_probes(admin_url: str) -> list[Probe]:
    """Each probe as ``(what is checked, whether it held, what was seen)``."""
    import psycopg

    from lhbench.envs import PgRoleError, PostgresDatabases, require_read_only_url
    from lhbench.sandbox import Forwarder, PgAccess

    results: list[Probe] = []
    try:
        pg = PostgresDatabases(admin_url, statement_timeout_ms=3000)
    except Exception as exc:  # the server or the admin URL: nothing else can be checked
        return [("PostgreSQL: the admin URL connects", False, _first_line(exc))]
    try:
        database = make_url(pg.clone(pg.template("CREATE TABLE t (a INTEGER);"))).database or ""
        reader = make_url(pg.reader_url(database))
        host, port = reader.host or "127.0.0.1", int(reader.port or 5432)
        admin_role = make_url(admin_url).username or ""

        # how the server itself authenticates: a wrong password for a real role
        try:
            psycopg.connect(
                host=host,
                port=port,
                user=reader.username,
                password="wrong-" + (reader.password or ""),
                dbname=database,
                connect_timeout=10,
            ).close()
            results.append(
                (
                    "PostgreSQL trusts these logins: a role got in with a wrong password "
                    "(any role, superusers too); untrusted code reaches it only through the gate",
                    True,
                    "trust",
                )
            )
        except psycopg.Error as exc:
            results.append(("PostgreSQL checks passwords", True, _first_line(exc)))

        with tempfile.TemporaryDirectory(prefix="lhbench-doctor-pg-") as tmp:
            sock = Path(tmp) / f".s.PGSQL.{port}"
            access = PgAccess(reader.username or "", database, statement_s=1.0, grace_s=1.0)
            with Forwarder(sock, host, port, postgres=access):

                def through(user: str, dbname: str) -> psycopg.Connection:
                    return psycopg.connect(
                        host=tmp,
                        port=port,
                        user=user,
                        password=reader.password,
                        dbname=dbname,
                        connect_timeout=10,
                        autocommit=True,
                    )

                for what, user, dbname in (
                    (f"the gate refuses the admin role {admin_role!r}", admin_role, database),
                    ("the gate refuses the role 'postgres'", "postgres", database),
                    ("the gate refuses the reader elsewhere", reader.username, "postgres"),
                ):
                    try:
                        through(user or "", dbname).close()
                        results.append((what, False, "connected"))
                    except psycopg.Error as exc:
                        seen = _first_line(exc)
                        results.append((what, "lhbench:" in seen, seen))

                try:
                    with through(reader.username or "", database) as conn:
                        try:
                            conn.execute("COPY (SELECT 1) TO PROGRAM 'true'")
                            results.append(
                                ("the reader cannot run COPY … TO PROGRAM", False, "it ran")
                            )
                        except psycopg.Error as exc:
                            results.append(
                                ("the reader cannot run COPY … TO PROGRAM", True, _first_line(exc))
                            )
                        conn.execute("SET statement_timeout = 0")
                        t0 = time.monotonic()
                        try:
                            conn.execute("SELECT pg_sleep(6)")
                            saw = "it ran 6 s"
                        except psycopg.errors.QueryCanceled as exc:
                            saw = f"cancelled after {time.monotonic() - t0:.1f} s: {exc}"
                        results.append(
                            (
                                "the gate cancels a query that turned its statement_timeout off",
                                saw.startswith("cancelled"),
                                saw,
                            )
                        )
                except psycopg.Error as exc:
                    results.append(("the gate admits the reader", False, _first_line(exc)))

        try:
            require_read_only_url(reader.render_as_string(hide_password=False))
            results.append(("the replay's reader role only reads", True, str(reader.username)))
        except PgRoleError as exc:
            results.append(("the replay's reader role only reads", False, str(exc)))
        try:
            require_read_only_url(admin_url)
            results.append(("a superuser URL is refused to untrusted code", False, "accepted"))
        except PgRoleError as exc:
            results.append(("a superuser URL is refused to untrusted code", True, str(exc)[:200]))
    except Exception as exc:  # a probe that could not run is a failed probe, said as such
        results.append(("PostgreSQL probes ran", False, _first_line(exc)))
    finally:
        with contextlib.suppress(Exception):
            pg.drop_all()
    return results
