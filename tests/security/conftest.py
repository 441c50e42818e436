"""Every attack case runs with secrets in lhbench's environment, as a real deployment has."""

from __future__ import annotations

import pytest

from tests.security.helpers import CANARY


@pytest.fixture(autouse=True)
def canary_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Provider keys and a session secret holding the canary."""
    monkeypatch.setenv("OPENAI_API_KEY", f"sk-{CANARY}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", f"sk-ant-{CANARY}")
    monkeypatch.setenv("LHBENCH_SESSION_SECRET", CANARY)
