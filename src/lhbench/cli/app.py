"""The ``lhbench`` command line: one Typer app, a module per command group."""

from __future__ import annotations

import os
import sys

import typer

from lhbench._version import __version__
from lhbench.cli import (
    aj,
    db,
    demo,
    doctor,
    export,
    imports,
    judge,
    packs,
    plugins,
    report,
    runs,
    users,
    verify,
    web,
)
from lhbench.cli import content as content_cli
from lhbench.cli import figma as figma_cli
from lhbench.cli.common import err, say
from lhbench.errors import LhbenchError

__all__ = ["app", "main"]

app = typer.Typer(
    name="lhbench",
    help="Evaluate long-horizon agents: packs, runs, judges, reports.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

for module in (
    demo,
    doctor,
    packs,
    db,
    runs,
    judge,
    imports,
    verify,
    report,
    export,
    plugins,
    aj,
    users,
    web,
):
    module.register(app)
figma_cli.register(app)
content_cli.register(app)


@app.command()
def version() -> None:
    """Print the lhbench version.

    Example: lhbench version
    """
    say(__version__)


def main() -> None:
    """Console entry point: user mistakes print as short lines and exit 2, no traceback."""
    # pydantic-ai's first-run advert would land in the middle of our output
    os.environ.setdefault("PYDANTIC_AI_NO_BANNER", "1")
    try:
        app()
    except LhbenchError as exc:
        for line in exc.lines():
            err.print(f"error: {line}", markup=False, style="red", highlight=False, soft_wrap=True)
        sys.exit(exc.exit_code)
