"""Paths inside an environment root: nothing a trajectory, an agent or a judge names may leave it.

:func:`inside` checks a name; :func:`open_beneath` opens it without following a symlink at
any step, so a link swapped in between the check and the open (by an agent's concurrent
shell command) cannot lead out either, and refuses devices, FIFOs and sockets (a FIFO
would block a reader forever).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

__all__ = [
    "EscapeError",
    "NotARegularFile",
    "ensure_dir_beneath",
    "inside",
    "open_beneath",
    "read_beneath",
    "replace_beneath",
    "write_beneath",
]


class EscapeError(ValueError):
    """A path that would leave the environment root."""


class NotARegularFile(ValueError):
    """A device, FIFO, socket or other special file, which tools never open."""


def _check_name(rel: str) -> None:
    if "\x00" in rel:
        raise EscapeError(f"path {rel!r} contains a NUL byte")
    if rel.startswith(("/", "\\")) or (len(rel) > 1 and rel[1] == ":"):
        raise EscapeError(f"path {rel!r} is absolute; paths are relative to the environment root")
    if ".." in Path(rel).parts:
        raise EscapeError(f"path {rel!r} climbs out with '..'")


def inside(root: Path, rel: str, *, must_exist: bool = False) -> Path:
    """``root/rel`` resolved, refusing absolute paths, ``..``, NUL bytes and symlinks out.

    Raises:
        EscapeError: the path is absolute, climbs out, or resolves (via a symlink) outside.
        FileNotFoundError: with ``must_exist``, when it does not exist.
    """
    _check_name(rel)
    base = root.resolve()
    target = (base / rel).resolve()
    if target != base and not target.is_relative_to(base):
        raise EscapeError(f"path {rel!r} leads outside the environment root (through a symlink)")
    if must_exist and not target.exists():
        raise FileNotFoundError(f"no such file or directory: {rel}")
    return target


def open_beneath(
    root: Path, rel: str, flags: int = os.O_RDONLY, *, mode: int = 0o644, make_parents: bool = False
) -> int:
    """A file descriptor for ``root/rel``, no symlink followed on the way (the caller closes it).

    Raises:
        EscapeError: the name leaves the root, or a component is a symlink.
        NotARegularFile: the target is a device, FIFO or socket.
        FileNotFoundError, IsADirectoryError, NotADirectoryError: as ``open``.
    """
    _check_name(rel)
    parts = [p for p in Path(rel).parts if p not in ("", ".")]
    dirfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            if make_parents:
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o755, dir_fd=dirfd)
            try:
                nfd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dirfd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(
                    os.path.join(f"/proc/self/fd/{dirfd}", part)
                ):
                    raise EscapeError(f"path {rel!r} goes through a symlink ({part})") from None
                raise
            os.close(dirfd)
            dirfd = nfd
        if not parts:
            return os.dup(dirfd)
        try:
            fd = os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_NONBLOCK, mode, dir_fd=dirfd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise EscapeError(f"path {rel!r} is a symlink") from None
            raise
        st = os.fstat(fd)
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            os.close(fd)
            raise NotARegularFile(f"{rel} is not a regular file (device, FIFO or socket)")
        os.set_blocking(fd, True)
        return fd
    finally:
        os.close(dirfd)


def read_beneath(root: Path, rel: str, *, limit: int) -> tuple[bytes, int]:
    """Up to ``limit`` bytes of ``root/rel`` and the file's full size.

    Raises:
        IsADirectoryError: it is a directory. (And what :func:`open_beneath` raises.)
    """
    fd = open_beneath(root, rel)
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(f"{rel} is a directory")
        chunks, got = [], 0
        while got < limit:
            data = os.read(fd, min(1 << 20, limit - got))
            if not data:
                break
            chunks.append(data)
            got += len(data)
        return b"".join(chunks), st.st_size
    finally:
        os.close(fd)


def write_beneath(root: Path, rel: str, data: bytes) -> None:
    """Create or replace ``root/rel`` (parents made), never through a symlink."""
    fd = open_beneath(
        root, rel, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode=0o644, make_parents=True
    )
    try:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            raise IsADirectoryError(f"{rel} is a directory")
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _dir_beneath(dirfd: int, part: str, rel: str, *, reset_links: bool) -> int:
    """Open (making it if missing) the directory ``part`` under ``dirfd``, never via a link."""
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
    try:
        return os.open(part, flags, dir_fd=dirfd)
    except FileNotFoundError:
        pass
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
            raise
        if not reset_links:
            raise EscapeError(f"path {rel!r} goes through a symlink or file ({part})") from None
        os.unlink(part, dir_fd=dirfd)  # a link or file planted where a directory belongs
    with contextlib.suppress(FileExistsError):
        os.mkdir(part, 0o755, dir_fd=dirfd)
    return os.open(part, flags, dir_fd=dirfd)


def replace_beneath(
    root: Path, rel: str, data: bytes, *, reset_links: bool = False, mode: int = 0o644
) -> None:
    """Atomically put ``data`` at ``root/rel``; nothing on the way is ever followed.

    The bytes go to a fresh temporary file beside the target (``O_EXCL | O_NOFOLLOW``),
    which is then renamed over the name: a symlink planted at the target is replaced, not
    written through. Parent directories are made; with ``reset_links`` a parent that is a
    symlink or a file (planted where lhbench expects its own directory, e.g. in a CLI's
    home the agent can write) is removed and made a real directory, otherwise that is an
    EscapeError.
    """
    _check_name(rel)
    parts = [p for p in Path(rel).parts if p not in ("", ".")]
    if not parts:
        raise IsADirectoryError(f"{rel!r} names the root")
    dirfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in parts[:-1]:
            nfd = _dir_beneath(dirfd, part, rel, reset_links=reset_links)
            os.close(dirfd)
            dirfd = nfd
        name = parts[-1]
        tmp = f".{name}.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=dirfd)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.replace(tmp, name, src_dir_fd=dirfd, dst_dir_fd=dirfd)
        except OSError:
            os.unlink(tmp, dir_fd=dirfd)
            raise
    finally:
        os.close(dirfd)


def ensure_dir_beneath(root: Path, rel: str) -> Path:
    """Make ``root/rel`` a real directory; a link or file planted on the way is replaced.

    For directories lhbench fills in a tree someone else could write (a CLI's config
    directory in a home the agent can write), so that later writes land there and not
    wherever a planted link points. Returns the path.
    """
    _check_name(rel)
    dirfd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for part in [p for p in Path(rel).parts if p not in ("", ".")]:
            nfd = _dir_beneath(dirfd, part, rel, reset_links=True)
            os.close(dirfd)
            dirfd = nfd
    finally:
        os.close(dirfd)
    return root / rel
