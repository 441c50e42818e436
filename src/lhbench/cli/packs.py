"""``lhbench packs`` and ``lhbench schema``: validate, list, register packs; JSON Schemas."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

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
from lhbench.errors import LhbenchError, PackError

if TYPE_CHECKING:
    from lhbench.schema import TaskPack

__all__ = ["pack_table", "register", "rubric_table"]

packs_app = typer.Typer(help="Validate, list and register task packs.", no_args_is_help=True)
schema_app = typer.Typer(help="The data model as JSON Schema.", no_args_is_help=True)


class Problems(LhbenchError):
    """Several problems, one line each."""

    def __init__(self, lines: list[str]) -> None:
        self._lines = lines
        super().__init__("\n".join(lines))

    def lines(self) -> list[str]:
        """One line per problem."""
        return self._lines


def pack_table(packs: list[tuple[TaskPack, Path]], title: str) -> object:
    """Packs as a table."""
    table = new_table(
        title,
        ["pack", "version", "env", "tasks", "rubrics", "skills", "hash"],
        right=("tasks", "rubrics", "skills"),
    )
    for pack, _path in packs:
        table.add_row(
            pack.id,
            pack.version,
            pack.environment.value,
            str(len(pack.tasks)),
            str(len(pack.rubrics)),
            str(len(pack.skills)),
            pack.content_hash[:10],
        )
    return table


def rubric_table(packs: list[tuple[TaskPack, Path]]) -> object:
    """Every rubric of the packs as a table."""
    table = new_table(
        "Rubrics", ["pack", "rubric", "family", "version", "author", "tiers (dimensions)"]
    )
    for pack, _path in packs:
        for r in pack.rubrics:
            tiers = ", ".join(
                f"{t.kind.value}({len(t.dimensions)}{'' if t.enabled else ', off'})"
                for t in r.tiers
            )
            table.add_row(pack.id, r.id, r.family, r.version, r.author.value, tiers)
    return table


@packs_app.command("validate")
def packs_validate(
    paths: Annotated[list[Path], typer.Argument(help="Pack directories (or parents of packs).")],
) -> None:
    """Check packs; one line per problem (file:line: what was expected), exit code 2.

    Example: lhbench packs validate ./my-pack
    """
    from lhbench.packs import find_pack_dirs, load_pack

    problems: list[str] = []
    for root in paths:
        for pack_dir in find_pack_dirs(root) or [root]:
            try:
                pack = load_pack(pack_dir)
            except PackError as exc:
                problems.extend(exc.lines())
                continue
            say(
                f"ok {pack.id} {pack.version}: {len(pack.tasks)} task(s), "
                f"{len(pack.rubrics)} rubric(s), {len(pack.skills)} skill(s) "
                f"{pack.content_hash[:12]}"
            )
    if problems:
        raise Problems(problems)


@packs_app.command("list")
def packs_list(as_json: JsonOption = False) -> None:
    """List the bundled packs and those under ``pack_paths``.

    Example: lhbench packs list --json
    """
    from lhbench.jobs import all_pack_dirs
    from lhbench.packs import load_pack

    loaded = [(load_pack(d), d) for d in all_pack_dirs(settings_for())]
    if as_json:
        dump_json(
            [
                {
                    "id": p.id,
                    "version": p.version,
                    "environment": p.environment.value,
                    "tasks": len(p.tasks),
                    "rubrics": [r.id for r in p.rubrics],
                    "content_hash": p.content_hash,
                    "path": str(d),
                }
                for p, d in loaded
            ]
        )
        return
    out.print(pack_table(loaded, "Task packs"))


@packs_app.command("add")
def packs_add(
    paths: Annotated[list[Path], typer.Argument(help="Pack directories to register.")],
    db: DbOption = None,
) -> None:
    """Register packs in the store as their current version (by content hash).

    Every command that loads a pack from disk registers it; this is the explicit refresh.
    Example: lhbench packs add ./my-pack
    """
    from lhbench.jobs.packs import register_pack
    from lhbench.packs import find_pack_dirs, load_pack

    with open_store(settings_for(db)) as store:
        for path in paths:
            for pack_dir in find_pack_dirs(path) or [path]:
                pack = load_pack(pack_dir)
                new = register_pack(store, pack, pack_dir)
                say(
                    f"{pack.id} {pack.version} ({pack.content_hash[:12]}): "
                    + ("registered" if new else "already stored; now current")
                )


@schema_app.command("export")
def schema_export(directory: Annotated[Path, typer.Argument(help="Output directory.")]) -> None:
    """Write one JSON Schema file per model.

    Example: lhbench schema export ./schemas
    """
    from lhbench.schema import export_json_schemas

    for path in export_json_schemas(directory):
        say(str(path))


def register(app: typer.Typer) -> None:
    """Add the packs and schema groups."""
    app.add_typer(packs_app, name="packs")
    app.add_typer(schema_app, name="schema")
