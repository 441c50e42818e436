"""What a PostgreSQL role handed to untrusted code may do, checked on the server itself.

Judges' SQL tools and tasks' checks get a reader URL. Whoever wrote that URL (a replay, a
user's config, a test) is not what keeps the server safe: the role it names is. So before
such code runs, the role is asked of the server, and a role that is a superuser (or can
become one), can create roles or databases, may run programs or read and write server
files, replicate, bypass row security, or write to any table or schema of the database, is
refused with :class:`PgRoleError`, naming the URL's role and what it could do.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy.engine import make_url

from lhbench.errors import LhbenchError

__all__ = ["DANGEROUS_ROLES", "PgRoleError", "check_read_only_role", "require_read_only_url"]

# predefined roles that reach the host or all data past the grants of one database
DANGEROUS_ROLES = (
    "pg_execute_server_program",
    "pg_read_server_files",
    "pg_write_server_files",
    "pg_write_all_data",
    "pg_read_all_data",
)

_ROLE_POWERS = """
SELECT r.rolname,
       r.rolsuper, r.rolcreaterole, r.rolcreatedb, r.rolreplication, r.rolbypassrls
FROM pg_roles r
WHERE pg_has_role(current_user, r.oid, 'MEMBER')
  AND (r.rolsuper OR r.rolcreaterole OR r.rolcreatedb OR r.rolreplication OR r.rolbypassrls
       OR r.rolname = ANY(%s))
ORDER BY r.rolname
"""

_WRITABLE = """
SELECT n.nspname || '.' || c.relname
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg_toast%%'
  AND (has_table_privilege(c.oid, 'INSERT') OR has_table_privilege(c.oid, 'UPDATE')
       OR has_table_privilege(c.oid, 'DELETE') OR has_table_privilege(c.oid, 'TRUNCATE'))
ORDER BY 1
LIMIT 3
"""

_CREATABLE = """
SELECT n.nspname FROM pg_namespace n
WHERE n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_temp%%'
  AND n.nspname NOT LIKE 'pg_toast%%'
  AND has_schema_privilege(n.oid, 'CREATE')
ORDER BY 1
LIMIT 3
"""


class PgRoleError(LhbenchError):
    """A PostgreSQL role given to untrusted code could do more than read one database."""


def check_read_only_role(conn: Any, where: str = "the database URL") -> None:
    """Refuse a connection whose role can do more than read (a psycopg connection).

    Raises:
        PgRoleError: what the role could do, naming ``where`` the URL came from.
    """
    cur = conn.cursor()
    try:
        cur.execute("SELECT current_user, current_database()")
        role, database = cur.fetchone()
        cur.execute(_ROLE_POWERS, (list(DANGEROUS_ROLES),))
        powers: list[str] = []
        for name, sup, createrole, createdb, repl, bypass in cur.fetchall():
            via = "" if name == role else f" (through membership in {name!r})"
            for flag, what in (
                (sup, "is a superuser"),
                (createrole, "can create roles"),
                (createdb, "can create databases"),
                (repl, "can replicate"),
                (bypass, "bypasses row-level security"),
            ):
                if flag:
                    powers.append(what + via)
            if name in DANGEROUS_ROLES:
                powers.append(f"is a member of {name}")
        cur.execute(_WRITABLE)
        tables = [r[0] for r in cur.fetchall()]
        if tables:
            powers.append(f"can write to tables ({', '.join(tables)})")
        cur.execute(_CREATABLE)
        schemas = [r[0] for r in cur.fetchall()]
        if schemas:
            powers.append(f"can create objects in schemas ({', '.join(schemas)})")
        cur.execute("SELECT has_database_privilege(current_database(), 'CREATE')")
        if cur.fetchone()[0]:
            powers.append(f"can create schemas in database {database!r}")
    finally:
        cur.close()
        conn.rollback()
    if powers:
        raise PgRoleError(
            f"{where}: role {role!r} on database {database!r} {'; '.join(powers)}; "
            "untrusted code gets only a read-only role (the replay makes one per database)"
        )


def require_read_only_url(url: str, where: str = "the database URL") -> None:
    """Connect to ``url`` (a PostgreSQL URL) and refuse it unless its role only reads.

    Raises:
        PgRoleError: the role can do more than read, or the server cannot be reached.
    """
    import psycopg

    parsed = make_url(url.replace("postgresql://", "postgresql+psycopg://", 1))
    conninfo = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
    try:
        conn = psycopg.connect(conninfo, connect_timeout=10)
    except psycopg.Error as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
        raise PgRoleError(
            f"{where}: cannot check the role of {parsed.username!r}: {first}"
        ) from None
    try:
        check_read_only_role(conn, where)
    finally:
        conn.close()
