"""Packs shipped to Ray nodes: unpacked once per node, never outside their place."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from lhbench.harness.executors import pack_archive, unpack_archive
from lhbench.packs import load_pack
from tests.harness.helpers import write_harness_pack


def test_a_pack_unpacks_on_a_node_as_it_was(tmp_path: Path) -> None:
    pack = write_harness_pack(tmp_path / "pack", hooks=False)
    digest, data = pack_archive(pack)
    home = tmp_path / "node-home"
    there = unpack_archive(home, digest, data)
    assert there == home / "ray-packs" / digest / "pack"
    assert load_pack(there).content_hash == load_pack(pack).content_hash
    (there / "marker").write_text("kept")
    # the second worker of the node finds it unpacked and leaves it alone
    assert unpack_archive(home, digest, data) == there and (there / "marker").is_file()
    assert [p.name for p in (home / "ray-packs").iterdir()] == [digest]


def test_archive_member_escaping_the_pack_is_refused(tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name in ("pack/pack.yaml", "../escaped.txt"):
            body = b"id: x\n"
            info = tarfile.TarInfo(name)
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
    home = tmp_path / "home"
    with pytest.raises(tarfile.FilterError):
        unpack_archive(home, "evil", buf.getvalue())
    assert not list(tmp_path.rglob("escaped.txt"))
    assert not list((home / "ray-packs").iterdir())  # nor anything half unpacked
