"""Commands that read a pack's figures check the pack on disk first (stat gate, then hash).

A rubric or verify.py edited since the pack was registered is re-registered and said, so
its old grades and labels are never read as current.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import lhbench.jobs.packs as jobs_packs
from lhbench.config import Settings
from lhbench.jobs import resolve_pack
from lhbench.jobs.packs import refresh_packs
from lhbench.packs import load_pack, resolve_pack_dir
from lhbench.reporting import ReportData
from lhbench.schema import Label
from lhbench.store import Store
from tests.cli.helpers import cli
from tests.factories import make_grade, make_run


@pytest.fixture
def graded(tmp_path: Path) -> tuple[Path, str, str]:
    """A copy of the samples pack, registered, with one current grade and one label."""
    pack_dir = tmp_path / "pack"
    shutil.copytree(resolve_pack_dir("lhbench-samples"), pack_dir)
    url = f"sqlite:///{tmp_path / 's.db'}"
    with Store.open(url) as store:
        loaded = resolve_pack(str(pack_dir), Settings(home=tmp_path / "home"), store)
        rubric = loaded.pack.rubric("samples-process")
        task = loaded.pack.task("ini-to-json")
        store.save_run(make_run("r1", pack_id=loaded.pack.id, task_id=task.id))
        store.save_grade(
            make_grade(
                "r1",
                rubric_id=rubric.id,
                rubric_version=rubric.version,
                rubric_hash=rubric.content_hash,
            )
        )
        store.save_label(
            Label(
                run_id="r1",
                passed=True,
                source=f"verify:{task.id}/verify.py",
                check_hash=task.content_hash,
            )
        )
        fresh = ReportData.from_store(store)
        assert len(fresh.grades) == 1 and fresh.label_of("r1") is True
        assert not fresh.excluded.notes()
    return pack_dir, url, loaded.pack.content_hash


def test_report_notices_a_rubric_and_verify_edit_since_registration(
    graded: tuple[Path, str, str], tmp_path: Path
) -> None:
    pack_dir, url, old_hash = graded
    with (pack_dir / "rubrics" / "samples-process.yaml").open("a") as f:
        f.write("# reworded anchors\n")
    with (pack_dir / "tasks" / "ini-to-json" / "verify.py").open("a") as f:
        f.write("# a stricter check\n")
    res = cli("report", "--db", url, "--out", str(tmp_path / "report"), cwd=tmp_path)
    assert res.exit_code == 0, res.stderr[-2000:]
    said = " ".join(res.stdout.split())
    assert "Pack lhbench-samples changed on disk since it was registered" in said
    assert "1 grade(s) for rubric samples-process" in said
    assert "1 check label(s) excluded" in said
    with Store.open(url) as store:
        new_hash = store.latest_pack_hash("lhbench-samples")
        assert new_hash == load_pack(pack_dir).content_hash != old_hash
        data = ReportData.from_store(store)
        assert data.grades == [] and data.label_of("r1") is None
        # `--include-stale` keeps them
        kept = ReportData.from_store(store, include_stale=True)
        assert len(kept.grades) == 1 and kept.label_of("r1") is True


def test_aj_score_reads_the_pack_on_disk_too(graded: tuple[Path, str, str]) -> None:
    pack_dir, url, old_hash = graded
    with (pack_dir / "tasks" / "ini-to-json" / "verify.py").open("a") as f:
        f.write("# a stricter check\n")
    res = cli("aj", "score", "--json", "--db", url)
    assert res.exit_code == 0, res.stderr[-2000:]
    with Store.open(url) as store:
        assert store.latest_pack_hash("lhbench-samples") != old_hash


def test_the_stat_gate_hashes_only_what_changed(
    graded: tuple[Path, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pack_dir, url, old_hash = graded
    loads: list[Path] = []

    def counting(path: Path) -> object:
        loads.append(Path(path))
        return load_pack(path)

    monkeypatch.setattr(jobs_packs, "load_pack", counting)
    with Store.open(url) as store:
        assert refresh_packs(store) == [] and loads == []  # unchanged: stated, never loaded
        # touched, same content: loaded once, nothing re-registered, the new stat kept
        verify = pack_dir / "tasks" / "ini-to-json" / "verify.py"
        st = verify.stat()
        os.utime(verify, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
        assert refresh_packs(store) == [] and len(loads) == 1
        assert store.latest_pack_hash("lhbench-samples") == old_hash
        assert refresh_packs(store) == [] and len(loads) == 1
        # a broken edit is said, and the registered version stays current
        (pack_dir / "pack.yaml").write_text("id: [broken\n")
        [change] = refresh_packs(store)
        assert change.new_hash is None and "no longer loads" in change.note
        assert store.latest_pack_hash("lhbench-samples") == old_hash
        # a directory that is gone is left alone
        shutil.rmtree(pack_dir)
        assert refresh_packs(store) == []
