"""``lhbench plugins``: what is registered by entry points, built in and installed."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from lhbench.cli.common import JsonOption, dump_json, new_table, out, say

__all__ = ["plugin_infos", "register"]

plugins_app = typer.Typer(
    help="Formats, harnesses, checks and environments from plugins.", no_args_is_help=True
)


def plugin_infos() -> list[Any]:
    """What every group holds, built-ins first, and what could not be loaded.

    Here, above every layer that owns a registry, so the registry module imports none.
    """
    from lhbench.harness.cli_agents import CLI_AGENTS
    from lhbench.ingest.formats import FORMATS
    from lhbench.jobs.environments import ENVIRONMENTS
    from lhbench.plugins import CHECKS, Registry

    registries: list[Registry[Any]] = [FORMATS, CLI_AGENTS, CHECKS, ENVIRONMENTS]
    return [i for reg in registries for i in reg.infos()]


@plugins_app.command("list")
def list_plugins(
    group: Annotated[
        str | None,
        typer.Option(help="Only this group: formats, harnesses, checks or environments."),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Every registered name by group, where it comes from, and plugins that failed to load.

    Example: lhbench plugins list --group formats
    """
    from lhbench.errors import ConfigError
    from lhbench.plugins import GROUPS

    if group is not None and group not in GROUPS:
        raise ConfigError(f"--group {group!r}: expected one of {', '.join(GROUPS)}")
    infos = [i for i in plugin_infos() if group is None or i.group == GROUPS[group]]
    if as_json:
        dump_json([i.as_dict() for i in infos])
        return
    table = new_table("Plugins", ["group", "name", "from", "version", "entry point", "status"])
    for i in infos:
        table.add_row(
            i.group.removeprefix("lhbench."),
            i.name,
            "built in" if i.builtin else i.distribution,
            i.version,
            i.target,
            "ok" if i.error is None else f"not loaded: {i.error}",
        )
    out.print(table)
    broken = [i for i in infos if i.error is not None]
    if broken:
        say(f"{len(broken)} plugin entry point(s) could not be used (see status)", to_err=True)


def register(app: typer.Typer) -> None:
    """Add ``plugins``."""
    app.add_typer(plugins_app, name="plugins")
