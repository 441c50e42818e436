"""What a run left in its workspace, as artifacts: nothing followed out, nothing dropped unsaid.

The walk never follows a symbolic link (a link is recorded, not read: it could point at
``/etc/shadow`` or the web session secret) and never opens a device, FIFO or socket.
Files past the size limit are kept truncated, files past the count limit are listed
without content, and anything left out is said in the artifact's status and note.
"""

from __future__ import annotations

import hashlib
import mimetypes
import os
import stat
from pathlib import Path

from lhbench.envs.paths import EscapeError, NotARegularFile, read_beneath
from lhbench.schema import Artifact

__all__ = ["MAX_ARTIFACTS", "MAX_ARTIFACT_BYTES", "MAX_LISTED", "SKIPPED_DIRS", "collect_artifacts"]

MAX_ARTIFACT_BYTES = 1 << 20
MAX_ARTIFACTS = 200
MAX_LISTED = 2000
# dependency and cache directories: listed as one omitted entry, not walked
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", ".venv", "venv", ".git", ".cache"})


def _omitted(run_id: str, name: str, note: str, size: int = 0) -> Artifact:
    return Artifact(
        run_id=run_id,
        name=name,
        media_type="application/octet-stream",
        sha256=hashlib.sha256(b"").hexdigest(),
        size=size,
        content=None,
        status="omitted",
        note=note,
    )


def collect_artifacts(run_id: str, root: Path) -> list[Artifact]:
    """The workspace's files, by relative path (hidden and temporary ones left out)."""
    out: list[Artifact] = []
    with_content = 0
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = Path(dirpath).relative_to(root)
        keep = []
        for d in sorted(dirnames):
            if d.startswith("."):
                continue
            if d in SKIPPED_DIRS:
                out.append(
                    _omitted(
                        run_id,
                        (rel_dir / d).as_posix() + "/",
                        "omitted (dependency or cache directory)",
                    )
                )
                continue
            if os.path.islink(os.path.join(dirpath, d)):
                out.append(
                    _omitted(
                        run_id, (rel_dir / d).as_posix(), "omitted (symbolic link, not followed)"
                    )
                )
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            rel = (rel_dir / f).as_posix()
            if f.startswith(".") or f.endswith(".tmp"):
                continue
            if len(out) >= MAX_LISTED:
                out.append(
                    _omitted(run_id, "(more files)", f"omitted (over {MAX_LISTED} files listed)")
                )
                return out
            st = os.lstat(os.path.join(dirpath, f))
            if stat.S_ISLNK(st.st_mode):
                out.append(_omitted(run_id, rel, "omitted (symbolic link, not followed)"))
                continue
            if not stat.S_ISREG(st.st_mode):
                out.append(_omitted(run_id, rel, "omitted (not a regular file)"))
                continue
            if with_content >= MAX_ARTIFACTS:
                out.append(
                    _omitted(
                        run_id, rel, f"omitted (over the {MAX_ARTIFACTS}-file limit)", st.st_size
                    )
                )
                continue
            try:
                data, size = read_beneath(root, rel, limit=MAX_ARTIFACT_BYTES)
            except (EscapeError, NotARegularFile, OSError) as exc:
                out.append(_omitted(run_id, rel, f"omitted (unreadable: {exc})"))
                continue
            with_content += 1
            truncated = size > len(data)
            out.append(
                Artifact(
                    run_id=run_id,
                    name=rel,
                    media_type=mimetypes.guess_type(f)[0] or "text/plain",
                    sha256=hashlib.sha256(data).hexdigest(),
                    size=size,
                    content=data,
                    status="truncated" if truncated else "ok",
                    note=f"truncated (first {len(data)} of {size} bytes)" if truncated else None,
                )
            )
    return out
