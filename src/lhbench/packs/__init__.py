"""Task packs on disk: loading, validation with file-and-line errors, content hashes."""

from lhbench.packs.bundled import (
    bundled_pack_dirs,
    find_pack_dirs,
    read_pack_id,
    resolve_pack_dir,
)
from lhbench.packs.hashing import hash_bytes, hash_tree
from lhbench.packs.loader import PACK_FILE, PackManifest, load_pack

__all__ = [
    "PACK_FILE",
    "PackManifest",
    "bundled_pack_dirs",
    "find_pack_dirs",
    "hash_bytes",
    "hash_tree",
    "load_pack",
    "read_pack_id",
    "resolve_pack_dir",
]
