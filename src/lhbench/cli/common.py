"""What every command shares: consoles, options, settings, the store, JSON, progress.

Commands are thin: parse flags, call one public function of ``lhbench.api`` (the jobs'
only entry, with the same parameters as the flags) or ``lhbench.reporting``, print. User
data (run ids, model names, messages) is printed with markup off, so a ``[models]`` or a
regex in it is shown as written.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from lhbench.errors import ConfigError, StoreError

if TYPE_CHECKING:
    from lhbench.config import Settings
    from lhbench.store import Store

__all__ = [
    "DbOption",
    "JsonOption",
    "UnsafeOption",
    "dump_json",
    "err",
    "new_table",
    "open_store",
    "out",
    "parse_versions",
    "progress_factory",
    "say",
    "settings_for",
    "warn",
]

# Full values when piped (CI logs, files): no 80-column wrap, no cut cells.
_PIPED = not os.isatty(1)
out = Console(highlight=False, width=10_000 if _PIPED else None, soft_wrap=_PIPED)
err = Console(stderr=True, highlight=False)

DbOption = Annotated[
    str | None, typer.Option("--db", help="Store URL (default: LHBENCH_DB_URL or .lhbench/).")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
RayAddressOption = Annotated[
    str | None,
    typer.Option(
        help="An existing Ray cluster for --executor ray (head:6379, ray://head:10001); "
        "default: the ray_address setting, else a Ray instance started here."
    ),
]
UnsafeOption = Annotated[
    bool,
    typer.Option(
        "--unsafe-no-sandbox",
        help="Where no sandbox works, run agents, checks and replays unconfined "
        "(recorded on each run). Never on a machine with secrets.",
    ),
]


def say(text: str, *, style: str | None = None, to_err: bool = False) -> None:
    """Print a message as written (no markup), optionally in one style."""
    (err if to_err else out).print(text, markup=False, style=style, soft_wrap=True)


def warn(text: str) -> None:
    """A warning on stderr."""
    err.print(text, markup=False, style="yellow", soft_wrap=True)


def settings_for(db: str | None = None, *, unsafe_no_sandbox: bool = False) -> Settings:
    """Settings, with ``--db`` (and ``--unsafe-no-sandbox`` when given) taking precedence."""
    from lhbench.config import load_settings

    overrides: dict[str, object] = {}
    if db:
        overrides["db_url"] = db
    if unsafe_no_sandbox:
        overrides["unsafe_no_sandbox"] = True
    return load_settings(**overrides)


def _sqlite_path(url: str) -> Path | None:
    if not url.startswith("sqlite:///"):
        return None
    path = url.removeprefix("sqlite:///")
    return None if path in ("", ":memory:") else Path(path)


def open_store(settings: Settings, *, create: bool = True) -> Store:
    """The store; reading commands (``create=False``) refuse to create one that is not there.

    Raises:
        StoreError: ``create`` is False and the SQLite file does not exist.
    """
    from lhbench.store import Store

    url = settings.database_url
    path = _sqlite_path(url)
    if not create and path is not None and not path.exists():
        raise StoreError(
            f"no store at {path}; run `lhbench db upgrade --db {url}` to create one "
            "(or check --db / LHBENCH_DB_URL / home)"
        )
    return Store.open(url)


def parse_versions(items: list[str] | None) -> dict[str, str]:
    """``["skill=v1,prompt=v0", "x=y"]`` -> ``{"skill": "v1", "prompt": "v0", "x": "y"}``."""
    versions: dict[str, str] = {}
    for item in items or []:
        for pair in filter(None, (p.strip() for p in item.split(","))):
            key, sep, value = pair.partition("=")
            if not sep or not key.strip() or not value.strip():
                raise ConfigError(f"--versions: expected key=value, found {pair!r}")
            versions[key.strip()] = value.strip()
    return versions


def _no_nan(value: Any) -> Any:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    if isinstance(value, dict):
        return {str(k): _no_nan(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_no_nan(v) for v in value]
    return value


def dump_json(value: Any, *, str_keys: bool = False) -> None:
    """Print JSON (NaN and infinities as null: JSON has neither).

    ``str_keys``: every dict key in ``value`` is a ``str`` (a command's own rows), so
    ``json.dumps`` writes the text the walk would; it is tried first and the value walked
    only when it holds a NaN or an infinity (a 400,000-value walk costs a second).
    Without it, keys are written as ``str(key)``, which ``json.dumps`` does not do for
    every type (``True`` is ``"true"`` to it).
    """
    if str_keys:
        try:
            typer.echo(json.dumps(value, allow_nan=False, default=str))
            return
        except ValueError:  # a NaN or an infinity: written as null below
            pass
    typer.echo(json.dumps(_no_nan(value), allow_nan=False, default=str))


def dump_json_array(items: Iterable[Any], *, per_write: int = 500) -> None:
    """Print a JSON array as its items come (the text ``dump_json(list(items))`` prints).

    Written ``per_write`` items at a time, so a listing of any length neither waits for
    its last item nor holds them all.
    """
    typer.echo("[", nl=False)
    first, buf = True, []
    for item in items:
        buf.append(json.dumps(_no_nan(item), allow_nan=False, default=str))
        if len(buf) >= per_write:
            typer.echo(("" if first else ", ") + ", ".join(buf), nl=False)
            first, buf = False, []
    if buf:
        typer.echo(("" if first else ", ") + ", ".join(buf), nl=False)
    typer.echo("]")


def new_table(title: str, columns: list[str], *, right: tuple[str, ...] = ()) -> Table:
    """A results table (full width when piped)."""
    table = Table(title=title, show_lines=False)
    for c in columns:
        table.add_column(
            c, justify="right" if c in right else "left", overflow="fold", no_wrap=_PIPED
        )
    return table


@contextmanager
def _bar(label: str, enabled: bool) -> Iterator[Any]:
    from lhbench.jobs import RichProgress

    with RichProgress(label, err, enabled=enabled) as bar:
        yield bar


def progress_factory(enabled: bool = True) -> Any:
    """A ``label -> progress context`` factory for the jobs (drawn on stderr)."""
    return lambda label: _bar(label, enabled)
