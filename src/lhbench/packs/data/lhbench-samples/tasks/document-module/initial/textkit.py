"""Small text helpers."""


def slugify(text: str, sep: str = "-") -> str:
    return sep.join(w for w in "".join(c.lower() if c.isalnum() else " " for c in text).split())


def word_count(text: str) -> int:
    return len(text.split())


def truncate(text: str, limit: int, marker: str = "…") -> str:
    return text if len(text) <= limit else text[: max(0, limit - len(marker))] + marker


def _private_helper() -> None:
    pass
