"""Render an office document to PNG pages: LibreOffice headless to PDF, pdfium to images.

Both steps run in ONE sandboxed process (:func:`render_document`): the document is copied
into a fresh work directory first, LibreOffice gets a private profile and HOME there, the
sandbox has no network and time, memory and process limits, and sees the copy and the
output directory only (plus the system and lhbench's Python, read-only). A spreadsheet is
exported one page per sheet (LibreOffice's ``SinglePageSheets``), so page N is sheet N.

Run inside as ``python -m lhbench.envs.gui.render INPUT OUTDIR`` (lhbench does that).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lhbench.sandbox import Limits, Sandbox, get_sandbox, policy_for, run_sandboxed_sync

__all__ = [
    "MAX_PAGES",
    "RENDER_DPI",
    "RenderError",
    "Rendered",
    "render_document",
    "soffice_binary",
]

MAX_PAGES = 60  # pages rasterised per document (the rest are counted, not drawn)
RENDER_DPI = 60  # small PNGs: a judge sees a page's layout, not print quality
MAX_PIXELS = 4_000_000
_PDF_FILTER = {
    ".docx": "pdf:writer_pdf_Export",
    ".pptx": "pdf:impress_pdf_Export",
    ".xlsx": 'pdf:calc_pdf_Export:{"SinglePageSheets":{"type":"boolean","value":"true"}}',
}


# Debian keeps LibreOffice's bootstrap files (sofficerc, registry) here, linked from /usr/lib
_LO_CONFIG = (Path("/etc/libreoffice"),)


class RenderError(RuntimeError):
    """The document could not be rendered (LibreOffice missing, failed or timed out)."""


@dataclass(frozen=True)
class Rendered:
    """Where a document's pages went: ``page-<n>.png`` (1-based), and how many there are."""

    directory: Path
    pages: int
    drawn: int

    def page(self, n: int) -> Path:
        """The PNG of page ``n`` (1-based)."""
        return self.directory / f"page-{n}.png"


def soffice_binary() -> str | None:
    """The LibreOffice executable on PATH (``soffice`` or ``libreoffice``), or None."""
    return shutil.which("soffice") or shutil.which("libreoffice")


def render_document(
    document: Path,
    out_dir: Path,
    *,
    sandbox: Sandbox | None = None,
    timeout: float = 90.0,
    also_readable: Sequence[Path] = (),
) -> Rendered:
    """Render ``document`` (DOCX, XLSX or PPTX) to ``out_dir/page-<n>.png`` in the sandbox.

    ``also_readable``: more paths the sandbox may read (none in lhbench's own use: the
    security tests' control shows what a document could pull in if it were given some).

    Raises:
        RenderError: naming the document, when LibreOffice is missing, fails or times out.
    """
    document = Path(document)
    suffix = document.suffix.lower()
    if suffix not in _PDF_FILTER:
        raise RenderError(f"{document.name}: not a DOCX, XLSX or PPTX file")
    if soffice_binary() is None:
        raise RenderError("LibreOffice (soffice) is not installed: scripts/system-deps installs it")
    out_dir = Path(out_dir).absolute()
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lhbench-render-") as tmp:
        work = Path(tmp)
        src = work / f"document{suffix}"
        shutil.copyfile(document, src)  # the sandbox sees this copy, never the original
        (work / "out").mkdir()
        policy = policy_for(
            work,
            writable=[work],
            readable=[*(p for p in _LO_CONFIG if p.exists()), *also_readable],
            env={"LHBENCH_IN_SANDBOX": "1", "SAL_USE_VCLPLUGIN": "svp"},
            home=work,
            endpoints=[],
            limits=Limits(
                wall_s=timeout,
                cpu_s=max(10, int(timeout)),
                memory_mb=2048,
                address_space=False,  # LibreOffice maps far more than it uses
                file_mb=256,
                processes=64,
            ),
        )
        argv = [sys.executable, "-I", "-m", "lhbench.envs.gui.render", str(src), str(work / "out")]
        res = run_sandboxed_sync(sandbox or get_sandbox(), argv, policy)
        if res.timed_out:
            raise RenderError(f"{document.name}: rendering timed out after {timeout}s")
        if res.returncode != 0:
            tail = (res.text("stderr") or res.text()).strip().splitlines()[-3:]
            raise RenderError(f"{document.name}: rendering failed: {' | '.join(tail)[-500:]}")
        try:
            doc = json.loads(res.text().strip().splitlines()[-1])
            pages, drawn = int(doc["pages"]), int(doc["drawn"])
        except (IndexError, ValueError, KeyError, TypeError) as exc:
            raise RenderError(f"{document.name}: renderer answered {res.text()[-200:]!r}") from exc
        for old in out_dir.glob("page-*.png"):
            old.unlink()
        for n in range(1, drawn + 1):
            png = work / "out" / f"page-{n}.png"
            if png.is_symlink() or not png.is_file():
                raise RenderError(f"{document.name}: page {n} was not drawn")
            shutil.copyfile(png, out_dir / f"page-{n}.png")
    return Rendered(out_dir, pages, drawn)


def _inside(src: Path, out: Path) -> int:
    """In the sandbox: convert with a private profile, rasterise, print the page count."""
    import pypdfium2 as pdfium  # type: ignore[import-untyped]

    soffice = soffice_binary()
    if soffice is None:
        print("soffice not found", file=sys.stderr)
        return 2
    profile = src.parent / "lo-profile"
    pdf_dir = src.parent / "pdf"
    cmd = [
        soffice,
        "--headless",
        "--norestore",
        "--nolockcheck",
        "--nodefault",
        "--nologo",
        f"-env:UserInstallation=file://{profile}",
        "--convert-to",
        _PDF_FILTER[src.suffix.lower()],
        "--outdir",
        str(pdf_dir),
        str(src),
    ]
    env = {**os.environ, "HOME": str(src.parent)}
    proc = subprocess.run(cmd, env=env, capture_output=True, timeout=600, check=False)
    pdf = pdf_dir / f"{src.stem}.pdf"
    if proc.returncode != 0 or not pdf.is_file():
        err = (proc.stderr or proc.stdout).decode("utf-8", "replace")[-400:]
        print(f"soffice exited {proc.returncode}: {err}", file=sys.stderr)
        return 2
    doc = pdfium.PdfDocument(str(pdf))
    try:
        pages = len(doc)
        drawn = min(pages, MAX_PAGES)
        for i in range(drawn):
            page = doc[i]
            w, h = page.get_size()
            scale = RENDER_DPI / 72
            if w * h * scale * scale > MAX_PIXELS:  # a huge page is drawn smaller
                scale = (MAX_PIXELS / (w * h)) ** 0.5
            page.render(scale=scale).to_pil().save(out / f"page-{i + 1}.png")
    finally:
        doc.close()
    print(json.dumps({"pages": pages, "drawn": drawn}))
    return 0


if __name__ == "__main__":
    sys.exit(_inside(Path(sys.argv[1]), Path(sys.argv[2])))
