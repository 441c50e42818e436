"""The order of grades, oldest first, computed in numpy rather than by the database.

Grades are read "oldest first": ``ORDER BY created_at, id`` (which of two same-named judge
configs' ratings wins depends on it). On a million grades the database's sort of the wide
rows took most of the read (SQLite 3.5-5 s, PostgreSQL seconds before the first row), so
the report reads them unsorted, with a sort key per row, and applies the same order here:

- ``created_at`` as an integer in the same order as the database's: on PostgreSQL the
  server's microseconds since the epoch; on SQLite the stored text (SQLite compares
  text bytewise), parsed when it has the one form SQLAlchemy writes
  (``YYYY-MM-DD HH:MM:SS.ffffff``), else its bytes compared as the database does;
- equal times broken by ``id``, bytewise (SQLite's BINARY collation, PostgreSQL's ``C``
  or ``C.UTF-8``: code point order is UTF-8 byte order); a store whose ids sort by another
  collation is sorted by the database, as before (:func:`bytewise_collation`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "as_bytes",
    "bytewise_keys",
    "chronological_order",
    "is_bytewise_collation",
    "sqlite_time_keys",
]

# SQLAlchemy's SQLite DateTime text: 2026-01-31 12:34:56.123456
_FORM = "0000-00-00 00:00:00.000000"
_SEPARATORS = {i: ord(c) for i, c in enumerate(_FORM) if c != "0"}
_DIGITS = [i for i, c in enumerate(_FORM) if c == "0"]


def as_bytes(values: Sequence[Any]) -> NDArray[np.bytes_]:
    """Text values as a fixed-width bytes array of their UTF-8 (numpy compares it bytewise)."""
    if not len(values):
        return np.zeros(0, dtype="S1")
    try:
        return np.array(values, dtype=np.bytes_)
    except UnicodeEncodeError:
        return np.array([v.encode() for v in values], dtype=np.bytes_)


def bytewise_keys(values: NDArray[np.bytes_]) -> list[NDArray[np.uint64]]:
    """Integer keys, most significant first, whose order is the values' byte order.

    Each key is 8 bytes of the value read big-endian (a shorter value padded with zero
    bytes, so a prefix sorts first, as memcmp-then-length does); keys equal on every row
    are left out. Sorting on integers is many times faster than on numpy's strings.
    """
    n, width = values.size, values.dtype.itemsize
    padded = np.zeros((n, -(-width // 8) * 8), dtype=np.uint8)
    padded[:, :width] = values.view(np.uint8).reshape(n, width)
    chunks = padded.view(">u8").astype(np.uint64)
    return [
        chunks[:, k] for k in range(chunks.shape[1]) if n and (chunks[:, k] != chunks[0, k]).any()
    ]


def sqlite_time_keys(texts: NDArray[np.bytes_]) -> list[NDArray[Any]]:
    """Keys, most significant first, in the order SQLite sorts these ``created_at`` texts.

    Text of SQLAlchemy's one form is parsed to a number: its fields, in range, read in a
    mixed radix, which orders as the digits (hence the text) do. Any other text is
    compared by its bytes (:func:`bytewise_keys`), as SQLite's BINARY collation does.
    """
    n = texts.size
    if texts.dtype.itemsize != len(_FORM):
        return bytewise_keys(texts)
    chars = texts.view(np.uint8).reshape(n, len(_FORM))
    seps = list(_SEPARATORS)
    digits = chars[:, _DIGITS] - np.uint8(ord("0"))  # a non-digit wraps past 9
    if (chars[:, seps] != np.array([_SEPARATORS[i] for i in seps], dtype=np.uint8)).any() or (
        digits > 9
    ).any():
        return bytewise_keys(texts)

    def field(start: int, stop: int) -> NDArray[np.int64]:
        out = np.zeros(n, dtype=np.int32)
        for c in range(start, stop):
            out *= 10
            out += digits[:, c]
        return out.astype(np.int64)

    month, day, hour, minute, second = (field(i, i + 2) for i in (4, 6, 8, 10, 12))
    if not (
        ((month >= 1) & (month <= 12) & (day >= 1) & (day <= 31) & (hour < 24)).all()
        and ((minute < 60) & (second < 60)).all()
    ):
        return bytewise_keys(texts)
    key = field(0, 4) * 12 + month - 1
    for value, radix in ((day - 1, 31), (hour, 24), (minute, 60), (second, 60)):
        key *= radix
        key += value
    key *= 1_000_000
    key += field(14, 20)
    return [key]


def chronological_order(times: Sequence[NDArray[Any]], ids: NDArray[np.bytes_]) -> NDArray[np.intp]:
    """The rows' permutation ordering them by time then id, as ``ORDER BY created_at, id``.

    ``times``: keys most significant first (:func:`sqlite_time_keys`, or PostgreSQL's
    microseconds). Rows are mostly stored in time order, which the (stable) sort is quick
    on; ids are compared only among rows of equal time.
    """
    n = ids.size
    if not times:  # every row at one time
        order = np.arange(n, dtype=np.intp)
    elif len(times) == 1:
        order = np.argsort(times[0], kind="stable")
    else:
        order = np.lexsort(times[::-1])
    if n < 2:
        return order
    tied = np.zeros(n - 1, dtype=np.bool_)
    for t in times:
        ts = t[order]
        tied |= ts[1:] != ts[:-1]
    tied = ~tied  # tied[i]: sorted rows i and i + 1 share their time
    if not tied.any():
        return order
    # the tied rows, each with its group of equal time (a number rising with the time)
    in_group = np.zeros(n, dtype=np.bool_)
    in_group[:-1] |= tied
    in_group[1:] |= tied
    group = np.cumsum(np.concatenate(([0], ~tied)))[in_group]
    rows = order[in_group]
    keys = bytewise_keys(ids[rows])
    within = np.lexsort((*keys[::-1], group))
    order[in_group] = rows[within]
    return order


def is_bytewise_collation(name: str, provider: str = "c") -> bool:
    """Whether a PostgreSQL collation orders text as its UTF-8 bytes.

    ``C`` and ``POSIX`` compare bytes; libc's ``C.UTF-8`` orders by code point, which is
    UTF-8 byte order; ``ucs_basic`` is code point order too.
    """
    if provider == "b":  # PostgreSQL 17's builtin provider: C or C.UTF-8, both code point
        return True
    if name.lower() in ("c", "posix", "ucs_basic"):
        return True
    return provider == "c" and name.lower() in ("c.utf8", "c.utf-8")
