"""``lhbench users``: the preference arena's annotator accounts."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from lhbench.cli.common import (
    DbOption,
    JsonOption,
    dump_json,
    new_table,
    open_store,
    out,
    say,
    settings_for,
)
from lhbench.errors import LhbenchError

__all__ = ["register"]

users_app = typer.Typer(help="Arena annotator accounts.", no_args_is_help=True)


def _password(from_stdin: bool) -> str:
    # piped input is read as the password (the documented way), a terminal is asked twice
    if from_stdin or not sys.stdin.isatty():
        line = sys.stdin.readline()
        if not line:
            raise LhbenchError("no password on standard input")
        return line.rstrip("\r\n")
    return str(typer.prompt("Password", hide_input=True, confirmation_prompt=True))


@users_app.command("add")
def users_add(
    name: Annotated[str, typer.Argument(help="Annotator name (their login).")],
    admin: Annotated[
        bool, typer.Option(help="May see run identities in the vote history.")
    ] = False,
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the password from standard input.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Create an annotator; asks for the password on a terminal, reads it when piped.

    Example: echo "$PASSWORD" | lhbench users add alice
    """
    from lhbench.web.auth import add_user

    password = _password(password_stdin)
    with open_store(settings_for(db)) as store:
        if store.get_user(name) is not None:
            raise LhbenchError(f"user {name!r} exists: `lhbench users passwd {name}` changes it")
        add_user(store, name, password, admin=admin)
    say(f"user {name!r} saved{' (admin)' if admin else ''}")


@users_app.command("passwd")
def users_passwd(
    name: Annotated[str, typer.Argument(help="Annotator name.")],
    admin: Annotated[
        bool | None, typer.Option("--admin/--no-admin", help="Also change the role.")
    ] = None,
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the password from standard input.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Change an annotator's password (and role); their open sessions end.

    Example: echo "$NEW_PASSWORD" | lhbench users passwd alice
    """
    from lhbench.web.auth import add_user

    with open_store(settings_for(db), create=False) as store:
        user = store.get_user(name)
        if user is None:
            raise LhbenchError(f"no user {name!r}: `lhbench users add {name}` creates one")
        add_user(
            store, name, _password(password_stdin), admin=user.is_admin if admin is None else admin
        )
    say(f"user {name!r} updated")


@users_app.command("list")
def users_list(as_json: JsonOption = False, db: DbOption = None) -> None:
    """Annotator accounts.

    Example: lhbench users list --json
    """
    with open_store(settings_for(db), create=False) as store:
        users = store.list_users()
    if as_json:
        dump_json(
            [{"name": u.name, "admin": u.is_admin, "created_at": u.created_at} for u in users]
        )
        return
    table = new_table(f"Users ({len(users)})", ["name", "role", "created"])
    for u in users:
        table.add_row(u.name, "admin" if u.is_admin else "annotator", u.created_at.isoformat())
    out.print(table)


@users_app.command("rm")
def users_rm(
    name: Annotated[str, typer.Argument(help="Annotator name.")], db: DbOption = None
) -> None:
    """Remove an annotator (their votes stay).

    Example: lhbench users rm alice
    """
    with open_store(settings_for(db), create=False) as store:
        if not store.delete_user(name):
            raise LhbenchError(f"no user {name!r}")
    say(f"user {name!r} removed")


def register(app: typer.Typer) -> None:
    """Add the users group."""
    app.add_typer(users_app, name="users")
