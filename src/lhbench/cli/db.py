"""``lhbench db``: the store's schema."""

from __future__ import annotations

import typer

from lhbench.cli.common import DbOption, say, settings_for

__all__ = ["register"]

db_app = typer.Typer(help="The store's database.", no_args_is_help=True)


@db_app.command("upgrade")
def db_upgrade(db: DbOption = None) -> None:
    """Create the store, or bring its schema to the newest migration.

    Example: lhbench db upgrade --db postgresql://me@localhost/lhbench
    """
    from lhbench.store import current_revision, head_revision, make_engine, upgrade

    engine = make_engine(settings_for(db).database_url)
    before = current_revision(engine)
    upgrade(engine)
    say(f"store at revision {head_revision()} (was {before or 'empty'})")


def register(app: typer.Typer) -> None:
    """Add the db group."""
    app.add_typer(db_app, name="db")
