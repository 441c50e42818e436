"""``lhbench serve``: the web app and the preference arena."""

from __future__ import annotations

import secrets
from typing import Annotated

import typer

from lhbench.cli.common import DbOption, open_store, say, settings_for

__all__ = ["register"]


def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = 8765,
    db: DbOption = None,
) -> None:
    """Serve the leaderboard, run pages, judge dashboards and the preference arena.

    Example: lhbench serve --port 8765
    """
    import uvicorn

    from lhbench.web import create_app

    settings = settings_for(db)
    secret_file = settings.home / "web-secret"
    if not secret_file.exists():
        secret_file.parent.mkdir(parents=True, exist_ok=True)
        secret_file.write_text(secrets.token_urlsafe(32))
        secret_file.chmod(0o600)
    store = open_store(settings)
    where = store.engine.url.render_as_string(hide_password=True)
    say(f"lhbench web: http://{host}:{port}/ (store {where})")
    uvicorn.run(
        # the overview's summary computed while the server starts listening
        create_app(
            store,
            secret=secret_file.read_text().strip(),
            warm=True,
            front_dir=settings.home / "web-overview",
        ),
        host=host,
        port=port,
        log_level="warning",
    )


def register(app: typer.Typer) -> None:
    """Add ``serve``."""
    app.command("serve")(serve)
