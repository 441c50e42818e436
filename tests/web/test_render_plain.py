"""Plain text and flat tool inputs are highlighted without Pygments, to the same bytes."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from markupsafe import Markup
from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import TextLexer, get_lexer_by_name

from lhbench.web.render import MAX_TEXT, highlight, tool_input_html

# what a tool's output may hold: markup, template syntax, NUL and other controls, every
# newline convention, a byte-order mark, tabs, quotes, non-ASCII and a lone surrogate
ALPHABET = [
    "a", "Z", "0", " ", "\t", "\n", "\r", "\r\n", "\ufeff", "\x00", "\x1b", "\x7f",
    "<", ">", "&", '"', "'", "<script>", "</pre>", "{{", "}}", "{%", "é", "日本", "🙂",
    "\u2028", "\ud800", "&amp;", "\\",
]  # fmt: skip
CASES = [
    "",
    "\n",
    "\n\n\n",
    "\r",
    "\r\n",
    "\ufeff",
    "\ufeff\ufeffx",
    "x\ufeff",
    "ok 1",
    "error: exit 2\n",
    "<script>alert(1)</script>",
    "{{ 7 * 7 }} {% raw %}",
    "nul\x00byte",
    "\n\nlead and trail\n\n",
    "tabs\tand\r\nCRLF\rCR",
    "x" * (MAX_TEXT + 5) + "<tail>",
]


def reference(text: str) -> Markup:
    """What ``highlight`` made before: Pygments' text lexer and the nowrap formatter."""
    body = pygments_highlight(text[:MAX_TEXT], TextLexer(stripnl=False), HtmlFormatter(nowrap=True))
    return Markup('<pre class="hl"><code>') + Markup(body) + Markup("</code></pre>")


@pytest.mark.parametrize("text", CASES)
def test_plain_text_as_pygments_makes_it(text: str) -> None:
    got = highlight(text)
    assert isinstance(got, Markup)
    assert str(got) == str(reference(text))


def test_random_text_as_pygments_makes_it() -> None:
    rng = random.Random(20261128)
    for _ in range(3000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 40)))
        assert str(highlight(text)) == str(reference(text)), repr(text)
        # a file name Pygments does not know is plain text too, through its lexer
        assert str(highlight(text, "notes.unknownext")) == str(reference(text)), repr(text)


def json_reference(value: dict[str, Any] | None) -> str:
    """What a tool call's input looked like before: its indented JSON through Pygments."""
    text = json.dumps(value or {}, indent=2, ensure_ascii=False)
    body = pygments_highlight(
        text[:MAX_TEXT], get_lexer_by_name("json", stripnl=False), HtmlFormatter(nowrap=True)
    )
    return str(Markup('<pre class="hl"><code>') + Markup(body) + Markup("</code></pre>"))


def _scalar(rng: random.Random) -> object:
    pick = rng.randrange(6)
    if pick == 0:
        return rng.choice([0, 1, -1, 7, -(2**70), 2**64, 10**30])
    if pick == 1:
        return rng.choice([True, False])
    if pick == 2:
        return None
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 12)))


JSON_CASES: list[dict[str, Any] | None] = [
    None,
    {},
    {"command": "make step1"},
    {"command": "<script>alert(1)</script>", "timeout": 30, "background": False},
    {"a": 1, "b": True, "c": None, "d": 0, "e": False},
    {"": "", "\x00": "nul\x00", "{{": "}}", "\u2028": "\r\n"},
    # what the fast path leaves to Pygments: nesting, floats, non-finite numbers, a long value
    {"args": ["-l", "-a"], "env": {"X": "1"}},
    {"ratio": 0.5, "small": 1e-05, "big": 1e16, "nan": float("nan"), "inf": float("-inf")},
    {"content": "x" * (MAX_TEXT + 10)},
    {"content": "<" * (MAX_TEXT // 4)},
]


@pytest.mark.parametrize("value", JSON_CASES)
def test_tool_input_as_pygments_makes_it(value: dict[str, Any] | None) -> None:
    got = tool_input_html(value)
    assert isinstance(got, Markup)
    assert str(got) == json_reference(value)


def test_random_tool_inputs_as_pygments_makes_them() -> None:
    rng = random.Random(28)
    for _ in range(2000):
        value = {
            "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 8))): _scalar(rng)
            for _ in range(rng.randrange(0, 6))
        }
        assert str(tool_input_html(value)) == json_reference(value), repr(value)
