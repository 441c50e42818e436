"""Numbers a judge gives, as the answer models read them (shared by judges and environments)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator

__all__ = ["JudgeInt", "JudgeNumber"]


def _json_number(value: Any) -> Any:
    # pydantic's lax mode would read `true` as 1 and "5" as 5: a judge that answers so has
    # not given a number, and its answer is re-asked (never stored as a score)
    if isinstance(value, bool | str):
        raise ValueError("must be a JSON number, not true/false or text")
    return value


# an integer (5.0 is 5) or a number a judge gives; true/false and numbers as text refused
JudgeInt = Annotated[int, BeforeValidator(_json_number)]
JudgeNumber = Annotated[float, BeforeValidator(_json_number)]
