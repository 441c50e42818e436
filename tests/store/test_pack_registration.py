"""Registering a pack that is already current writes nothing (no new store version).

Every ``lhbench judge`` and ``lhbench run`` registers its pack; before, an unchanged pack's
registration still updated its ``seen_at``, which bumped the store's version and logged a
change, so a grade job that found every grade stored made the web app recompute.
"""

from __future__ import annotations

from pathlib import Path

from lhbench.jobs.packs import register_pack
from lhbench.packs import load_pack
from lhbench.store import Store
from tests.packs.test_loader import RUBRIC, write_pack


def test_the_current_pack_registered_again_writes_nothing(store: Store, tmp_path: Path) -> None:
    d = write_pack(tmp_path / "p")
    pack = load_pack(d)
    assert register_pack(store, pack, d) is True
    version, mark = store.data_version(), store.change_mark()
    for _ in range(3):
        assert register_pack(store, pack, d) is False
    assert (store.data_version(), store.change_mark()) == (version, mark)
    assert store.latest_pack_hash(pack.id) == pack.content_hash


def test_an_older_content_registered_again_becomes_current(store: Store, tmp_path: Path) -> None:
    d1, d2 = (
        write_pack(tmp_path / "p1"),
        write_pack(tmp_path / "p2", rubric=RUBRIC.replace('version: "2"', 'version: "3"')),
    )
    old, new = load_pack(d1), load_pack(d2)
    assert old.content_hash != new.content_hash
    register_pack(store, old, d1)
    register_pack(store, new, d2)
    assert store.latest_pack_hash(old.id) == new.content_hash
    version = store.data_version()
    assert register_pack(store, old, d1) is False  # stored already, but not current: written
    assert store.data_version() != version
    assert store.latest_pack_hash(old.id) == old.content_hash
    assert store.current_packs()[old.id] == old.content_hash


def test_the_same_content_from_another_place_is_recorded(store: Store, tmp_path: Path) -> None:
    d1 = write_pack(tmp_path / "here")
    pack = load_pack(d1)
    register_pack(store, pack, d1)
    d2 = write_pack(tmp_path / "there")
    assert load_pack(d2).content_hash == pack.content_hash
    version = store.data_version()
    register_pack(store, load_pack(d2), d2)
    assert store.data_version() != version
    assert store.pack_sources()[pack.id][1] == str(d2.resolve())
