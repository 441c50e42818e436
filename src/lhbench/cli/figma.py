"""``lhbench figma``: check a built app against ground-truth frames; serve Figma fixtures."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from lhbench.cli.common import JsonOption, UnsafeOption, dump_json, new_table, out, say, warn
from lhbench.errors import ConfigError

__all__ = ["register"]

figma_app = typer.Typer(
    name="figma",
    help="The Figma-to-code environment: output checks and the fixture server.",
    no_args_is_help=True,
)


def _pct(v: float | None) -> str:
    return "–" if v is None else f"{v:.2f}"


@figma_app.command("check")
def check(
    app_dir: Annotated[
        Path, typer.Argument(help="The app's directory (package.json or index.html).")
    ],
    gt: Annotated[Path, typer.Option("--gt", help="Ground-truth directory with manifest.json.")],
    design: Annotated[
        Path | None,
        typer.Option(
            help="The Figma file (file.json) or a fixture store; default: found beside --gt."
        ),
    ] = None,
    work: Annotated[
        Path | None, typer.Option(help="Where builds and screenshots go (default: a temp dir).")
    ] = None,
    offline: Annotated[
        bool, typer.Option("--offline", help="Install dependencies from the npm cache only.")
    ] = False,
    registry: Annotated[
        str, typer.Option(help="npm registry the build may reach (through the sandbox forwarder).")
    ] = "https://registry.npmjs.org/",
    capture_timeout: Annotated[
        float,
        typer.Option(
            "--capture-timeout",
            help="Seconds the browser capture of all frames may take (pages with many frames "
            "need more).",
            min=1.0,
        ),
    ] = 900.0,
    as_json: JsonOption = False,
    unsafe_no_sandbox: UnsafeOption = False,
) -> None:
    """Build an app and check it against ground-truth frames (exit 1 unless it passes).

    Pass means LH-Bench's quality ≥ 4 of 5: built, no ground-truth leak, and fidelity at
    least the calibrated threshold (printed with the verdict). Built & deployed is
    reported beside it, never as the pass.

    The build and the browser run in the sandbox. Measures: build, deploy (strict and
    lenient serving), routes (path, then hash), blank pages, ground-truth leakage, text
    recall and position, colours (CIEDE2000), typography, assets, components, banded edge
    F1, palette, responsive checks, hover probes and design-token coverage.
    Example: lhbench figma check ./my-app --gt ./ground_truth --json
    """
    from lhbench.cli.common import settings_for
    from lhbench.envs.figma import ManifestError, check_app
    from lhbench.sandbox import get_sandbox

    if not app_dir.is_dir():
        raise ConfigError(f"{app_dir}: not a directory")
    settings = settings_for(unsafe_no_sandbox=unsafe_no_sandbox)
    sandbox = get_sandbox(
        settings.sandbox, unsafe=settings.unsafe_no_sandbox, image=settings.sandbox_image
    )
    try:
        report = check_app(
            app_dir,
            gt,
            design=design,
            work_dir=work,
            sandbox=sandbox,
            registry=None if offline else registry,
            cache_dir=settings.home / "npm-cache",
            capture_timeout=capture_timeout,
        )
    except ManifestError as exc:
        raise ConfigError(str(exc)) from None
    if as_json:
        dump_json(report.as_dict())
    else:
        _print(report)
    raise typer.Exit(0 if report.passed() else 1)


def _print(report: object) -> None:
    from lhbench.envs.figma import CheckReport

    assert isinstance(report, CheckReport)
    b = report.build
    say(f"build: {'ok' if b.ok else 'FAILED'}" + (f" ({b.reason})" if b.reason else ""))
    for s in b.steps:
        say(
            f"  {s.command}: exit {s.exit_code} in {s.seconds:.1f}s"
            + (" (timed out)" if s.timed_out else "")
        )
    if not b.ok and b.steps:
        say("  " + "\n  ".join(b.steps[-1].tail.strip().splitlines()[-8:]))
    dep = report.deploy
    say(
        f"deploy: {'ok' if report.deploy_ok else 'FAILED'}"
        + (f" ({dep.get('reason')})" if dep.get("reason") else "")
    )
    strict = dep.get("strict") or {}
    if strict:
        say(
            f"  strict: index {strict.get('index_status')}, assets failing "
            f"{[a['url'] for a in strict.get('assets', []) if a.get('status') != 200]}, "
            f"routes failing {dep.get('strict_route_failures')}"
        )
        say(f"  lenient fallbacks used: {(dep.get('lenient') or {}).get('fallbacks_used')}")
    table = new_table(
        "frames",
        [
            "frame",
            "route",
            "url",
            "flag",
            "text",
            "pos",
            "color",
            "fill",
            "type",
            "assets",
            "comp",
            "edges",
        ],
        right=("text", "pos", "color", "fill", "type", "assets", "comp", "edges"),
    )
    for f in report.frames:
        sc = f.scores
        flag = (
            ("blank " if f.blank else "")
            + ("LEAK " if f.leak else "")
            + ("" if f.resolved else "unresolved")
        )
        path = "/" + f.url.split("://", 1)[-1].split("/", 1)[-1] if f.url else "–"
        table.add_row(
            f.name,
            f.route,
            path,
            flag.strip() or "ok",
            _pct(sc.text_recall),
            _pct(sc.position_dc),
            _pct(sc.text_color),
            _pct(sc.fill_color),
            _pct(sc.typography),
            _pct(sc.asset_coverage),
            f"{sc.component_matched}/{sc.component_total}",
            _pct(sc.band_edge_f1),
        )
    out.print(table)
    for f in report.frames:
        for why in f.blank_reasons:
            say(f"  {f.name}: blank: {why}")
        for why in f.leak_reasons:
            say(f"  {f.name}: leak: {why}")
        for e in f.errors[:3]:
            say(f"  {f.name}: {e}")
    summary = report.summary()
    say("summary: " + ", ".join(f"{k} {_pct(v)}" for k, v in summary.items() if k != "frames"))
    by_reason: dict[str, list[str]] = {}
    for measure, why in report.skipped().items():
        by_reason.setdefault(why, []).append(measure)
    for why, measures in by_reason.items():
        say(f"skipped (left out of every mean, shown as –): {', '.join(measures)}: {why}")
    if report.tokens is not None:
        t = report.tokens
        say(
            f"tokens: colour {_pct(t.color)}, font sizes {_pct(t.font_size)}, families "
            f"{_pct(t.font_family)}, radii {_pct(t.radius)}, shadows {_pct(t.shadow)}, spacing "
            f"{_pct(t.spacing)}; {t.categories_covered}/6 categories; leaks {t.leaks}"
        )
    for w in report.warnings:
        warn(f"warning: {w}")
    from lhbench.envs.figma.fidelity import DEPLOY_DEFINITION, PASS_DEFINITION

    verdict = report.verdict()
    word = {True: "PASSED", False: "FAILED", None: "UNDECIDED"}[verdict]
    say(f"{word}: {report.detail()}")
    say(f"  pass = {PASS_DEFINITION}")
    say(f"  built & deployed: {'yes' if report.deployed() else 'no'} ({DEPLOY_DEFINITION})")


@figma_app.command("serve")
def serve(
    store: Annotated[
        str, typer.Option(help="Fixture store directory, or bundled:<pack>.")
    ] = "bundled:figma-mini",
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port (0: a free one).")] = 0,
    token: Annotated[
        str | None, typer.Option(help="X-Figma-Token to require (default: any).")
    ] = None,
    rate_limit: Annotated[
        str, typer.Option(help="off, N/min, or capacity=N,per_minute=R,schedule=3;7")
    ] = "off",
) -> None:
    """Serve a Figma fixture store over Figma's REST API until interrupted.

    Example: lhbench figma serve --rate-limit 10/min --port 8787
    """
    import signal
    import threading

    from lhbench.envs.figma import FigmaFixtureServer, FixtureStore, parse_rate_limit, store_path

    try:
        limit = parse_rate_limit(rate_limit)
        root = store_path(store)
    except ValueError as exc:
        raise ConfigError(f"--store/--rate-limit: {exc}") from None
    fixtures = FixtureStore(root)
    if not fixtures.keys():
        raise ConfigError(f"--store {store}: no <file_key>/file.json under {root}")
    srv = FigmaFixtureServer(fixtures, token=token, rate_limit=limit, host=host, port=port).start()
    say(f"serving {', '.join(fixtures.keys())} at {srv.url} (Ctrl-C to stop)")
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    signal.signal(signal.SIGINT, lambda *_: done.set())
    done.wait()
    srv.stop()


def register(app: typer.Typer) -> None:
    """Add the ``figma`` group."""
    app.add_typer(figma_app)
