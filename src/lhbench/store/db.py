"""Engines and migrations: SQLite by default, PostgreSQL by URL, always at Alembic head."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, NoSuchModuleError, OperationalError

from lhbench.errors import StoreError
from lhbench.store._step_writer import register_adapters

if TYPE_CHECKING:
    from alembic.config import Config

# Alembic is imported where it is used: it costs ~0.7 s, and most commands never migrate.

__all__ = ["alembic_config", "current_revision", "head_revision", "make_engine", "upgrade"]

MIGRATIONS = Path(__file__).parent / "migrations"


def _normalize(url: str) -> str:
    # Users write postgresql://…; we ship psycopg 3, not psycopg2.
    if url.startswith("postgresql://") or url.startswith("postgres://"):
        return "postgresql+psycopg://" + url.split("://", 1)[1]
    return url


# NULLs and booleans bound without sqlite3's slow failed adapter lookup (same values)
register_adapters()

# A new SQLite store gets 16 KiB pages (4 KiB is the default): a bulk import then writes a
# quarter of the WAL frames. An existing store keeps its page size (the pragma is a no-op).
_SQLITE_PAGE_SIZE = 16384


def _dumps(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def make_engine(url: str) -> Engine:
    """An engine for ``url``; SQLite files get WAL, foreign keys and a busy timeout."""
    try:
        parsed = make_url(_normalize(url))
    except ArgumentError as exc:
        raise StoreError(f"store URL {url!r} is not a database URL: {exc}") from None
    kwargs: dict[str, Any] = {}
    if parsed.get_backend_name() == "sqlite":
        if parsed.database and parsed.database != ":memory:":
            Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
        kwargs["connect_args"] = {"timeout": 30}
    else:
        kwargs["pool_pre_ping"] = True
    # orjson serializes the JSON columns several times faster than the stdlib
    kwargs["json_serializer"] = _dumps
    try:
        engine = create_engine(parsed, **kwargs)
    except (ArgumentError, NoSuchModuleError) as exc:
        raise StoreError(f"store URL {url!r}: {exc}") from None
    if parsed.get_backend_name() == "sqlite":

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
            cur = dbapi_conn.cursor()
            cur.execute(f"PRAGMA page_size={_SQLITE_PAGE_SIZE}")  # before WAL: new files only
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.close()

    return engine


def alembic_config() -> Config:
    """Alembic configuration pointing at the migrations shipped in the package."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    return cfg


def head_revision() -> str | None:
    """The newest migration the package ships."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(alembic_config()).get_current_head()


def current_revision(engine: Engine) -> str | None:
    """The migration the database is at (None for an empty database)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def shipped_head() -> str:
    """The newest migration, read from the file names without Alembic.

    Each migration's revision is its file's four-digit prefix and follows the one before it
    (``tests/store/test_migrations.py`` holds every file to that), so the head is the
    largest prefix.
    """
    return max(p.name[:4] for p in (MIGRATIONS / "versions").glob("[0-9][0-9][0-9][0-9]_*.py"))


def _at_head(engine: Engine) -> bool:
    # a store already at head opens without importing Alembic (~0.3 s, most of a command)
    try:
        with engine.connect() as conn:
            versions = conn.execute(text("SELECT version_num FROM alembic_version")).all()
    except DBAPIError:  # no version table yet (a new store), or not reachable: Alembic says
        return False
    return [v for (v,) in versions] == [shipped_head()]


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the database to ``revision``; a no-op when it is already there."""
    if revision == "head" and _at_head(engine):
        return
    from alembic import command

    cfg = alembic_config()
    try:
        with engine.begin() as conn:
            cfg.attributes["connection"] = conn
            command.upgrade(cfg, revision)
    except OperationalError as exc:
        raise StoreError(
            f"cannot open the store at {engine.url.render_as_string(hide_password=True)}: "
            f"{exc.orig}"
        ) from None
