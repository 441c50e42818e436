"""Helpers for verify scripts: read a replayed database whatever its backend."""

from __future__ import annotations

from typing import Any

from sqlalchemy import create_engine, text

__all__ = ["sql_rows"]


def sql_rows(url: str, query: str) -> list[tuple[Any, ...]]:
    """Rows of a query against a SQLite or PostgreSQL URL."""
    eng = create_engine(url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with eng.connect() as conn:
            return [tuple(r) for r in conn.execute(text(query)).all()]
    finally:
        eng.dispose()
