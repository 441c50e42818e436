"""GUI final states: OSWorld result directories imported, materialized, viewed, rendered."""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path

import pytest
from PIL import Image

from lhbench.envs.gui import (
    GuiView,
    RenderError,
    import_osworld,
    load_result_dir,
    materialize,
    render_document,
)
from lhbench.errors import PackError
from lhbench.packs import resolve_pack_dir
from lhbench.testing import ModelStub, StubReply, StubRequest
from tests.cli.helpers import cli
from tests.envs.gui.helpers import make_docx, make_pptx, make_xlsx, zip_bomb

PACK = resolve_pack_dir("aj-gui-mini")


def png(color: tuple[int, int, int] = (200, 200, 200)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (64, 40), color).save(buf, format="PNG")
    return buf.getvalue()


def osworld_result(d: Path, *, steps: int = 3, trees: bool = True) -> Path:
    """A result directory as OSWorld's lib_run_single.py leaves one (plus logs we must drop)."""
    d.mkdir(parents=True)
    (d / "step_0.png").write_bytes(png())
    (d / "instruction.txt").write_text("Put the total of B2:B5 in B6.\n")
    (d / "runtime.log").write_text("DEBUG agent said things\n")
    (d / "recording.mp4").write_bytes(b"\0\0\0\x18ftypmp42")
    lines = []
    for n in range(1, steps + 1):
        ts = f"20260302@10{n:02d}00"
        shot = f"step_{n}_{ts}.png"
        (d / shot).write_bytes(png((10 * n, 0, 0)))
        if trees:
            (d / shot.replace(".png", ".xml")).write_text(
                f"<desktop-frame><n>{n}</n></desktop-frame>"
            )
        action = "DONE" if n == steps else f"pyautogui.click({n}, {n})"
        lines.append({"reflection": "ok", "response": f"step {n}", "step_num": n,
                      "action_timestamp": ts, "action": action, "reward": 0,
                      "done": n == steps, "info": {}, "screenshot_file": shot})  # fmt: skip
    (d / "traj.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (d / "result.txt").write_text("1.0\n")
    return d


def test_import_keeps_only_what_the_state_needs(tmp_path: Path) -> None:
    src = osworld_result(tmp_path / "results" / "pyautogui" / "screenshot" / "m" / "calc" / "x")
    (tmp_path / "cache").mkdir()  # OSWorld's evaluator fetches the final file here
    doc = make_xlsx(tmp_path / "cache" / "budget.xlsx", {"A1": 1})
    rec = import_osworld(src, doc, tmp_path / "pack-traj")
    names = sorted(p.name for p in rec.directory.iterdir())
    assert "runtime.log" not in names and "recording.mp4" not in names
    assert {"traj.jsonl", "result.txt", "step_0.png", "final"} <= set(names)
    assert [s.step for s in rec.steps] == [0, 1, 2, 3]
    assert rec.steps[1].a11y is not None and rec.score == 1.0
    assert rec.document == rec.directory / "final" / "budget.xlsx"
    # every path of the record is under the pack, none in the staging directory
    assert all(s.screenshot is not None and s.screenshot.parent == rec.directory for s in rec.steps)
    assert all(s.screenshot.is_file() for s in rec.steps if s.screenshot is not None)
    with pytest.raises(PackError, match="already exists"):
        import_osworld(src, doc, tmp_path / "pack-traj")


@pytest.mark.parametrize(
    "attack",
    [
        "dotdot", "symlink", "not-png", "missing", "bomb", "absolute",
        "hardlink", "repeated-step", "nan-score", "score-above-1", "deep-json",
    ],
)  # fmt: skip
def test_import_refuses_forged_result_dirs(tmp_path: Path, attack: str) -> None:
    src = osworld_result(tmp_path / "r")
    secret = tmp_path / "secret.png"
    secret.write_bytes(png((255, 0, 0)))
    doc = make_xlsx(tmp_path / "budget.xlsx", {"A1": 1})
    lines = (src / "traj.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    shot = src / first["screenshot_file"]
    if attack == "dotdot":
        first["screenshot_file"] = "../secret.png"
    elif attack == "absolute":
        first["screenshot_file"] = str(secret)
    elif attack == "symlink":
        shot.unlink()
        shot.symlink_to(secret)
    elif attack == "not-png":
        shot.write_bytes(b"<svg onload=alert(1)>")
    elif attack == "missing":
        shot.unlink()
    elif attack == "hardlink":  # a second name for a file from elsewhere on the host
        shot.unlink()
        os.link(secret, shot)
    elif attack == "repeated-step":  # would hide the first step 1 from the judge
        lines.insert(1, json.dumps({**first, "action": "innocent"}))
    elif attack == "nan-score":
        (src / "result.txt").write_text("nan\n")
    elif attack == "score-above-1":
        (src / "result.txt").write_text("7\n")
    elif attack == "deep-json":
        lines.append("[" * 200_000)
    else:
        doc = zip_bomb(tmp_path / "bomb.xlsx", inner="xl/workbook.xml")
    lines[0] = json.dumps(first)
    (src / "traj.jsonl").write_text("\n".join(lines) + "\n")
    dest = tmp_path / "dest"
    with pytest.raises(PackError) as err:
        import_osworld(src, doc, dest)
    assert not dest.exists() and not dest.with_name("dest.importing").exists()
    assert any(w in str(err.value) for w in ("traj.jsonl", "step_1", "bomb", "result.txt"))


def test_materialized_state_is_a_read_only_copy_the_view_reads(tmp_path: Path) -> None:
    traj = PACK / "tasks" / "excel-total-formula" / "trajectories" / "pass-sum"
    before = (traj / "final" / "budget.xlsx").read_bytes()
    state = materialize(load_result_dir(traj), tmp_path / "state")
    doc = state / "document.xlsx"
    assert doc.read_bytes() == before
    assert not os.access(doc, os.W_OK) or os.geteuid() == 0  # root ignores modes
    assert oct(doc.stat().st_mode & 0o777) == "0o444"
    assert oct(state.stat().st_mode & 0o777) == "0o555"
    view = GuiView(state)
    cells = view.read(cells="A1:B6")
    assert "B6: None  formula =SUM(B2:B5)" in cells and "B2: 1200" in cells
    assert "excel" in view.info() and "5 step(s)" in view.info()
    assert "step 2: pyautogui.typewrite" in view.steps()
    shot = view.screenshot(2)
    assert isinstance(shot, bytes) and shot[:4] == b"\x89PNG"
    assert "table-cell" in view.a11y_tree(2)
    tail = view.a11y_tree(2, offset=100)
    assert tail == view.a11y_tree(2)[100:]
    assert "no screenshot at step 99" in str(view.screenshot(99))
    assert view.pages(1, 1) == ([], "(no rendering: the document was not rendered)")
    # made again (a second judge run): replaced whole, still read-only
    state = materialize(load_result_dir(traj), tmp_path / "state")
    assert GuiView(state).read(cells="B6").count("SUM") == 1


def test_view_reads_word_and_powerpoint_structure(tmp_path: Path) -> None:
    for name, maker in (("memo", "word-format-memo/trajectories/pass-formatted"),
                        ("deck", "ppt-move-note/trajectories/pass-moved")):  # fmt: skip
        state = materialize(load_result_dir(PACK / "tasks" / maker), tmp_path / name)
        text = GuiView(state).read()
        if name == "memo":
            assert "[1] style=Heading 1 align=center: Office move" in text
            assert "«Deadline: »(bold)" in text
        else:
            assert "'Note' text_box at (0.50, 0.50) in" in text and "level 0: Draft" in text


def test_rendering_in_the_sandbox_gives_a_page_per_sheet_slide_or_page(tmp_path: Path) -> None:
    xlsx = make_xlsx(tmp_path / "w.xlsx", {"A1": "left", "B2": 7}, sheets=("One", "Two", "Three"))
    r = render_document(xlsx, tmp_path / "x")
    assert (r.pages, r.drawn) == (3, 3)
    pptx_ = render_document(make_pptx(tmp_path / "p.pptx", ["a", "b"]), tmp_path / "p")
    assert pptx_.pages == 2
    docx_ = render_document(make_docx(tmp_path / "d.docx", ["Hello"]), tmp_path / "d")
    img = Image.open(docx_.page(1))
    assert docx_.pages == 1 and img.width > 300 and img.height > img.width  # a portrait page
    with pytest.raises(RenderError, match="not a DOCX"):
        render_document(tmp_path / "d.docx.txt", tmp_path / "z")


def _llm_pass(req: StubRequest) -> StubReply:
    return StubReply.call("final_result", {"verdict": "PASS", "evidence": ["x"], "confidence": 1})


def test_cli_import_osworld_then_judge_labels_it(tmp_path: Path) -> None:
    pack = tmp_path / "pack"
    pack.mkdir()
    shutil.copy(PACK / "pack.yaml", pack / "pack.yaml")
    task = pack / "tasks" / "excel-total-formula"
    shutil.copytree(PACK / "tasks" / "excel-total-formula", task)
    shutil.rmtree(task / "trajectories")
    src = osworld_result(tmp_path / "result")
    # the evaluator's cached copy of the final file: the golden one, so it passes
    (tmp_path / "cache").mkdir()
    shutil.copy(task / "golden" / "budget.xlsx", tmp_path / "cache" / "budget.xlsx")
    res = cli("aj", "import-osworld", str(src), "--pack", str(pack), "--task",
              "excel-total-formula", "--name", "imported-1", "--document",
              str(tmp_path / "cache" / "budget.xlsx"), "--json", cwd=tmp_path)  # fmt: skip
    assert res.exit_code == 0, res.stderr[-1000:]
    assert json.loads(res.stdout)["steps"] == 4
    bad = cli("aj", "import-osworld", str(src), "--pack", str(pack), "--task", "../..",
              "--name", "x", cwd=tmp_path)  # fmt: skip
    assert bad.exit_code == 2
    url = f"sqlite:///{tmp_path / 's.db'}"
    with ModelStub(_llm_pass) as stub:
        res = cli("aj", "run", str(pack), "--judge", "llm", "--model",
                  f"openai:judge@{stub.base_url}", "--db", url, cwd=tmp_path)  # fmt: skip
        assert res.exit_code == 0, res.stderr[-1000:]
        assert "1 run(s); 1 labelled (1 pass)" in res.stdout


def test_a_symlinked_or_broken_trajectory_is_the_packs_error(tmp_path: Path) -> None:
    from lhbench.config import Settings
    from lhbench.jobs import resolve_pack
    from lhbench.jobs.aj_gui import gui_trajectories
    from lhbench.store import Store

    pack = tmp_path / "pack"
    pack.mkdir()
    shutil.copy(PACK / "pack.yaml", pack / "pack.yaml")
    task = pack / "tasks" / "ppt-bold-title"
    shutil.copytree(PACK / "tasks" / "ppt-bold-title", task)
    elsewhere = osworld_result(tmp_path / "elsewhere")
    (elsewhere / "final").mkdir()
    make_pptx(elsewhere / "final" / "review.pptx", ["x"])
    with Store.open(f"sqlite:///{tmp_path / 's.db'}") as store:
        loaded = resolve_pack(str(pack), Settings(home=tmp_path / "home"), store)
        assert len(gui_trajectories(loaded)) == 2
        (task / "trajectories" / "linked").symlink_to(elsewhere)
        with pytest.raises(PackError, match="symlink"):
            gui_trajectories(loaded)
        (task / "trajectories" / "linked").unlink()
        (task / "trajectories" / "pass-bold" / "traj.jsonl").write_text("{not json\n")
        with pytest.raises(PackError, match=r"traj\.jsonl:1"):
            gui_trajectories(loaded)
