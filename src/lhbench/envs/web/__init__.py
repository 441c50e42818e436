"""The replayed web of the search domain: a recorded corpus, its index, answers split into items."""

from lhbench.envs.web.answers import AnswerItem, SearchAnswer, load_answers
from lhbench.envs.web.corpus import (
    CORPUS_FILE,
    RecordedPage,
    build_index,
    load_corpus,
    normalize_url,
    readable_text,
)
from lhbench.envs.web.recorded import NOT_RECORDED, RecordedWeb

__all__ = [
    "CORPUS_FILE",
    "NOT_RECORDED",
    "AnswerItem",
    "RecordedPage",
    "RecordedWeb",
    "SearchAnswer",
    "build_index",
    "load_answers",
    "load_corpus",
    "normalize_url",
    "readable_text",
]
