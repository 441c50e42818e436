"""The final state of an office (GUI) task, and an OSWorld result directory imported into it.

A GUI pack keeps each trajectory as an OSWorld result directory
(``tasks/<task>/trajectories/<name>/``), shaped as OSWorld's ``lib_run_single.py`` writes
one: ``traj.jsonl`` (one line per executed action: ``step_num``, ``action_timestamp``,
``action``, ``reward``, ``done``, ``info``, ``screenshot_file``), the screenshots it names
(``step_<n>_<timestamp>.png``, plus ``step_0.png`` before the first action),
``result.txt`` (the evaluator's score), and, when the agent observed it, the
accessibility tree of each step beside its screenshot (``<screenshot stem>.xml``). The
final document — which OSWorld's evaluator fetches from the VM — is kept in ``final/``.

:func:`materialize` turns that into the state a check and the judge's tools see::

    document.<docx|xlsx|pptx>      the final document (a copy; read-only)
    steps.json                     [{"step", "action", "screenshot", "a11y"}] per step
    steps/step-<n>.png, .xml       each step's screenshot and accessibility tree
    render/page-<n>.png            the final document rendered (LibreOffice, sandboxed)
    render/render.json             {"pages", "drawn"} (or {"error"})
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lhbench.errors import PackError, Problem
from lhbench.office.documents import DOCUMENT_KINDS, DocumentError, check_package

__all__ = [
    "DOCUMENT_STEM",
    "GuiRecord",
    "GuiStep",
    "import_osworld",
    "load_result_dir",
    "materialize",
    "state_document",
]

DOCUMENT_STEM = "document"
TRAJ_FILE = "traj.jsonl"
MAX_STEPS = 200
MAX_SHOT_BYTES = 5_000_000
MAX_TREE_BYTES = 2_000_000
MAX_TRAJ_BYTES = 5_000_000
_SHOT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_@.\-]{0,150}\.png$")
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class GuiStep:
    """One step: its number, the action taken, its screenshot and accessibility tree."""

    step: int
    action: str
    screenshot: Path | None
    a11y: Path | None


@dataclass(frozen=True)
class GuiRecord:
    """An OSWorld result directory, checked: its steps, final document and score."""

    directory: Path
    steps: tuple[GuiStep, ...]
    document: Path
    score: float | None


def _regular(path: Path, cap: int) -> bool:
    try:
        st = path.lstat()
    except OSError:
        return False
    # one link only: a hard link would bring a file from elsewhere on the host along
    return stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and st.st_size <= cap


def _final_document(d: Path, problems: list[Problem]) -> Path | None:
    final = d / "final"
    if final.is_symlink() or not final.is_dir():
        problems.append(Problem(final, "missing: the final document is kept here"))
        return None
    docs = [p for p in sorted(final.iterdir()) if p.suffix.lower() in DOCUMENT_KINDS]
    if len(docs) != 1:
        problems.append(Problem(final, f"expected one DOCX/XLSX/PPTX file, found {len(docs)}"))
        return None
    try:
        check_package(docs[0])
    except DocumentError as exc:
        problems.append(Problem(docs[0], str(exc)))
        return None
    return docs[0]


def load_result_dir(d: Path) -> GuiRecord:
    """Check an OSWorld-shaped result directory (with ``final/``) and list its steps.

    Screenshots must be regular PNG files inside ``d`` under a size cap, named as OSWorld
    names them; a missing accessibility tree is fine (not every agent observes one).

    Raises:
        PackError: naming the file (and line) of each problem.
    """
    d = Path(d)
    problems: list[Problem] = []
    traj = d / TRAJ_FILE
    steps: list[GuiStep] = []
    if not _regular(traj, MAX_TRAJ_BYTES):
        problems.append(
            Problem(traj, f"missing, not a regular file, or over {MAX_TRAJ_BYTES} bytes")
        )
    else:
        first = d / "step_0.png"
        if _regular(first, MAX_SHOT_BYTES):
            tree0 = d / "step_0.xml"
            steps.append(
                GuiStep(0, "(start)", first, tree0 if _regular(tree0, MAX_TREE_BYTES) else None)
            )
        seen: set[int] = set()
        for n, raw in enumerate(traj.read_bytes().splitlines(), 1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
                if not isinstance(obj, dict):
                    raise ValueError("not a JSON object")
            except (ValueError, UnicodeDecodeError, RecursionError) as exc:
                problems.append(Problem(traj, f"not a JSON object: {exc}", n))
                continue
            if "step_num" not in obj:
                continue  # a crash record ({"Error": ...}) has no step
            num = obj.get("step_num")
            if type(num) is not int or not 0 < num <= MAX_STEPS * 10:
                problems.append(Problem(traj, f"step_num {num!r} is not a step number", n))
                continue
            if num in seen:
                problems.append(Problem(traj, f"step_num {num} appears twice", n))
                continue
            seen.add(num)
            if len(steps) >= MAX_STEPS:
                problems.append(Problem(traj, f"more than {MAX_STEPS} steps", n))
                break
            name = obj.get("screenshot_file")
            shot: Path | None = None
            if name is not None:
                if not isinstance(name, str) or not _SHOT.match(name) or ".." in name:
                    problems.append(
                        Problem(traj, f"screenshot_file {str(name)[:80]!r} is not a file name", n)
                    )
                    continue
                shot = d / name
                if not _regular(shot, MAX_SHOT_BYTES):
                    problems.append(Problem(shot, "missing, not a regular file, or too large", n))
                    continue
                if shot.read_bytes()[:8] != _PNG_MAGIC:
                    problems.append(Problem(shot, "not a PNG image", n))
                    continue
            tree: Path | None = shot.with_suffix(".xml") if shot is not None else None
            a11y = tree if tree is not None and _regular(tree, MAX_TREE_BYTES) else None
            action = obj.get("action")
            text = action if isinstance(action, str) else json.dumps(action)[:2000]
            steps.append(GuiStep(num, text[:2000], shot, a11y))
    document = _final_document(d, problems)
    score = None
    result = d / "result.txt"
    if _regular(result, 1000):
        try:
            score = float(result.read_text(encoding="utf-8").strip())
        except ValueError:
            problems.append(Problem(result, "not a number"))
        else:
            if not 0.0 <= score <= 1.0:  # NaN fails this too
                problems.append(Problem(result, f"score {score} is not in 0..1"))
                score = None
    if problems:
        raise PackError(problems)
    assert document is not None
    return GuiRecord(d, tuple(steps), document, score)


def state_document(state: Path) -> Path | None:
    """The final document of a materialized state, or None."""
    for suffix in DOCUMENT_KINDS:
        p = Path(state) / f"{DOCUMENT_STEM}{suffix}"
        if _regular(p, 1 << 40):
            return p
    return None


def _read_only(root: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(root):
        for f in filenames:
            os.chmod(Path(dirpath) / f, 0o444)
        for dn in dirnames:
            os.chmod(Path(dirpath) / dn, 0o555)
    os.chmod(root, 0o555)


def materialize(record: GuiRecord, out: Path, *, render: Any = None) -> Path:
    """Write the state of ``record`` to ``out`` (made anew, then read-only).

    ``render``: a callable ``(document, render_dir) -> Rendered`` (e.g.
    :func:`~lhbench.envs.gui.render.render_document`), or None to render nothing; a
    render that fails is recorded in ``render/render.json`` and the state stands.
    """
    out = Path(out)
    if out.exists():
        for dirpath, _, _ in os.walk(out):
            os.chmod(dirpath, 0o755)
        shutil.rmtree(out)
    (out / "steps").mkdir(parents=True)
    shutil.copyfile(record.document, out / f"{DOCUMENT_STEM}{record.document.suffix.lower()}")
    index = []
    for s in record.steps:
        shot = tree = None
        if s.screenshot is not None:
            shot = f"steps/step-{s.step}.png"
            shutil.copyfile(s.screenshot, out / shot)
        if s.a11y is not None:
            tree = f"steps/step-{s.step}.xml"
            shutil.copyfile(s.a11y, out / tree)
        index.append({"step": s.step, "action": s.action, "screenshot": shot, "a11y": tree})
    (out / "steps.json").write_text(json.dumps(index, indent=1), encoding="utf-8")
    rdir = out / "render"
    rdir.mkdir()
    if render is not None:
        try:
            r = render(out / f"{DOCUMENT_STEM}{record.document.suffix.lower()}", rdir)
            meta: dict[str, Any] = {"pages": r.pages, "drawn": r.drawn}
        except Exception as exc:  # a document LibreOffice cannot render still has a state
            meta = {"error": str(exc)[:500]}
        (rdir / "render.json").write_text(json.dumps(meta), encoding="utf-8")
    _read_only(out)
    return out


def import_osworld(result_dir: Path, document: Path | None, dest: Path) -> GuiRecord:
    """Copy an OSWorld result directory (and its final document) into a pack's form.

    Copies ``traj.jsonl``, ``result.txt``, ``instruction.txt``, the screenshots and
    accessibility trees the steps name, and the final document into ``dest/final/`` —
    nothing else (no recording, no logs). ``document`` defaults to the one file in
    ``result_dir/final/``.

    Raises:
        PackError: naming what is wrong in the result directory.
    """
    src = Path(result_dir)
    if document is None:
        problems: list[Problem] = []
        probe = _final_document(src, problems)
        if probe is None:
            raise PackError(problems or [Problem(src, "no final document: pass --document")])
        document = probe
    document = Path(document)
    if document.suffix.lower() not in DOCUMENT_KINDS:
        raise PackError([Problem(document, "not a DOCX, XLSX or PPTX file")])
    try:
        check_package(document)
    except DocumentError as exc:
        raise PackError([Problem(document, str(exc))]) from exc
    dest = Path(dest)
    if dest.exists():
        raise PackError([Problem(dest, "already exists")])
    stage = dest.with_name(dest.name + ".importing")
    shutil.rmtree(stage, ignore_errors=True)
    (stage / "final").mkdir(parents=True)
    try:
        shutil.copyfile(document, stage / "final" / document.name)
        for name in (TRAJ_FILE, "result.txt", "instruction.txt"):
            if _regular(src / name, MAX_TRAJ_BYTES):
                shutil.copyfile(src / name, stage / name)
        staged = load_result_dir_unchecked_shots(src)
        for p in staged:
            shutil.copyfile(p, stage / p.name)
        load_result_dir(stage)  # the staged copy is checked before it takes dest
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    stage.rename(dest)
    return load_result_dir(dest)  # paths under dest, not the staging directory


def load_result_dir_unchecked_shots(src: Path) -> list[Path]:
    """The screenshot and tree files a result directory's ``traj.jsonl`` names (safe names)."""
    out = []
    first = src / "step_0.png"
    if _regular(first, MAX_SHOT_BYTES):
        out.append(first)
        if _regular(src / "step_0.xml", MAX_TREE_BYTES):
            out.append(src / "step_0.xml")
    traj = src / TRAJ_FILE
    if not _regular(traj, MAX_TRAJ_BYTES):
        return out
    for raw in traj.read_bytes().splitlines():
        try:
            obj = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            continue
        name = obj.get("screenshot_file") if isinstance(obj, dict) else None
        if isinstance(name, str) and _SHOT.match(name) and ".." not in name:
            shot = src / name
            if _regular(shot, MAX_SHOT_BYTES):
                out.append(shot)
                if _regular(shot.with_suffix(".xml"), MAX_TREE_BYTES):
                    out.append(shot.with_suffix(".xml"))
    return out
