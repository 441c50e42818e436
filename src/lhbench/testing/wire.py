"""What the stub's protocol adapters share."""

from __future__ import annotations

from typing import Any

__all__ = ["joined_text"]


def joined_text(content: Any) -> str:
    """A string as is; a list of blocks as their ``text`` fields joined by newlines.

    The blocks are Anthropic content blocks, Responses ``input_text``/``output_text`` items
    or Gemini parts; blocks without text (images, tool calls) are left out.
    """
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(b["text"]) for b in content if isinstance(b, dict) and "text" in b)
    return ""
