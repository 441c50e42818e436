"""Plain text is highlighted without Pygments' machinery, to the same bytes as Pygments."""

from __future__ import annotations

import random

import pytest
from markupsafe import Markup
from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import TextLexer

from lhbench.web.render import MAX_TEXT, highlight

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
