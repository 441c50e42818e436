"""Extraction of the generated data room (byte-stable, line-addressable) and of hostile files."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import zipfile
from pathlib import Path

import pytest

from lhbench.envs.content import SourceError, extract_data_room, extract_file, load_sources
from lhbench.envs.content.extract import MAX_UNZIPPED_BYTES
from tests.envs.content.conftest import CONTEXT, PACK

SCRIPT = Path(__file__).resolve().parents[3] / "scripts/make_content_mini.py"


def _tree(d: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(d.iterdir())}


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("make_content_mini", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_extraction_is_byte_identical_on_rerun_and_matches_the_frozen_pack(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    extract_data_room(PACK / "data_room", a)
    extract_data_room(PACK / "data_room", b)
    assert _tree(a) == _tree(b)
    assert _tree(a) == _tree(CONTEXT)  # the pack's frozen copy is what the code produces


def test_the_data_room_itself_regenerates_byte_for_byte(tmp_path: Path) -> None:
    _generator().make_data_room(tmp_path / "room")
    assert _tree(tmp_path / "room") == _tree(PACK / "data_room")


def test_sources_json_records_provenance_of_every_source() -> None:
    doc = json.loads((CONTEXT / "sources.json").read_text())
    by_id = {s["id"]: s for s in doc["sources"]}
    assert set(by_id) == {
        "field-trial-2025",
        "heat-pump-primer",
        "installer-guide",
        "refrigerant-faq",
        "training-deck",
    }
    assert by_id["heat-pump-primer"]["extractor"]["name"] == "pdfplumber"
    assert by_id["installer-guide"]["extractor"]["name"] == "python-docx"
    assert by_id["training-deck"]["extractor"]["name"] == "python-pptx"
    assert by_id["refrigerant-faq"]["extractor"]["name"] == "trafilatura"
    for sid, rec in by_id.items():
        raw = (PACK / "data_room" / rec["origin"]).read_bytes()
        assert rec["sha256"] == hashlib.sha256(raw).hexdigest()
        assert rec["lines"] == (CONTEXT / f"{sid}.md").read_text().count("\n")
        assert rec["extractor"]["version"]


def test_formats_keep_what_matters_and_drop_boilerplate() -> None:
    s = load_sources(CONTEXT)
    primer = s.lines["heat-pump-primer"]
    assert primer[0] == "# Heat Pumps: A Primer"
    assert "## The refrigeration cycle" in primer  # headings from font size
    assert "| Compressor | raises pressure and temperature |" in primer  # table rows whole
    # one sentence per line, even though the PDF wrapped them at the page width
    assert (
        "The cycle has four stages: evaporation, compression, condensation and expansion." in primer
    )
    deck = s.text("training-deck")
    assert "## Slide 2: Why flow temperature matters" in deck
    assert "> Notes: Stress that weather compensation should stay switched on." in deck
    faq = s.text("refrigerant-faq")
    assert "R290 is propane" in faq
    for boilerplate in ("Cookie settings", "Popular questions", "Contact us"):
        assert boilerplate not in faq
    guide = s.lines["installer-guide"]
    assert guide[0] == "# Installer Guide: Sizing and Siting"
    assert "- Use the design outdoor temperature for the site's region." in guide


def test_two_files_with_the_same_id_are_refused_naming_both(tmp_path: Path) -> None:
    room = tmp_path / "room"
    room.mkdir()
    (room / "Notes.md").write_text("# A\n\nOne.\n")
    (room / "notes.txt").write_text("Two.\n")
    with pytest.raises(SourceError, match=r"notes.*also the id of Notes\.md"):
        extract_data_room(room, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_unsupported_files_are_named(tmp_path: Path) -> None:
    (tmp_path / "x.exe").write_bytes(b"MZ")
    with pytest.raises(SourceError, match=r"x\.exe.*unsupported file type"):
        extract_file(tmp_path / "x.exe")


def test_a_symlink_in_the_data_room_is_refused(tmp_path: Path) -> None:
    room = tmp_path / "room"
    room.mkdir()
    secret = tmp_path / "secret.md"
    secret.write_text("# secret\n")
    (room / "leak.md").symlink_to(secret)
    with pytest.raises(SourceError, match="symlinks are refused"):
        extract_data_room(room, tmp_path / "out")


def test_a_corrupt_pdf_is_a_named_error_not_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4\n" + b"\x00garbage" * 100)
    with pytest.raises(SourceError, match=r"broken\.pdf: pdfplumber could not read it"):
        extract_file(bad)


def test_a_docx_zip_bomb_is_refused_before_parsing(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.docx"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("[Content_Types].xml", "<x/>")
        # highly compressible: a few hundred KB on disk, beyond the inflate limit
        zf.writestr("word/big.xml", b"\0" * (MAX_UNZIPPED_BYTES + 1))
    assert bomb.stat().st_size < 2_000_000
    with pytest.raises(SourceError, match=r"bomb\.docx: inflates to"):
        extract_file(bomb)


def test_a_file_that_is_not_a_zip_is_not_a_docx(tmp_path: Path) -> None:
    fake = tmp_path / "fake.pptx"
    fake.write_text("not a zip")
    with pytest.raises(SourceError, match=r"fake\.pptx: not a valid Office file"):
        extract_file(fake)


def test_an_html_page_with_no_main_text_is_named(tmp_path: Path) -> None:
    page = tmp_path / "empty.html"
    page.write_text("<html><head><title>t</title></head><body><script>x()</script></body></html>")
    with pytest.raises(SourceError, match=r"empty\.html"):
        extract_file(page)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["sources"][0].update(lines=999), "records 999"),
        (lambda d: d["sources"][0].update(id="../etc/passwd"), r"sources\[0\]\.id|sources\.0\.id"),
        (lambda d: d["sources"].append(dict(d["sources"][0])), "appears twice"),
        (lambda d: d["sources"][0].update(sha256="zz"), "sha256"),
        (lambda d: d.update(extra=1), "extra"),
    ],
)
def test_a_tampered_sources_json_is_refused(tmp_path: Path, edit, message: str) -> None:  # type: ignore[no-untyped-def]
    ctx = tmp_path / "ctx"
    extract_data_room(PACK / "data_room", ctx)
    doc = json.loads((ctx / "sources.json").read_text())
    edit(doc)
    (ctx / "sources.json").write_text(json.dumps(doc))
    with pytest.raises(SourceError, match=message):
        load_sources(ctx)


def test_a_sources_json_that_is_not_json_names_its_line(tmp_path: Path) -> None:
    (tmp_path / "sources.json").write_text('{\n  "sources": [\n  oops\n]}')
    with pytest.raises(SourceError, match=r"sources\.json:3: not JSON"):
        load_sources(tmp_path)
