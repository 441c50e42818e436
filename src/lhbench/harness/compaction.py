"""Context compaction for the native harness (LH-Bench §4.2).

When the conversation passes a token budget, older turns are summarized into a working
set (commitments, open TODOs, verified facts, files touched) and replaced by it; the last
few turns stay verbatim, and a tool call is never separated from its result. Each
compaction is reported so the trajectory records it.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel, Field
from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models import Model

__all__ = ["Compactor", "WorkingSet", "estimate_message_tokens"]


class WorkingSet(BaseModel):
    """What survives a compaction."""

    commitments: list[str] = Field(
        default_factory=list, description="What the agent has committed to do."
    )
    open_todos: list[str] = Field(default_factory=list)
    verified_facts: list[str] = Field(default_factory=list, description="Facts checked with tools.")
    files_touched: list[str] = Field(default_factory=list)

    def render(self) -> str:
        """The working set as the message that replaces the compacted turns."""

        def block(title: str, items: list[str]) -> str:
            return f"{title}:\n" + ("\n".join(f"- {i}" for i in items) or "- (none)")

        return "\n".join(
            [
                "[context compacted: earlier turns were summarized into this working set]",
                block("Commitments", self.commitments),
                block("Open TODOs", self.open_todos),
                block("Verified facts", self.verified_facts),
                block("Files touched", self.files_touched),
            ]
        )


def estimate_message_tokens(messages: list[ModelMessage]) -> int:
    """~4 characters a token over the serialized conversation."""
    return len(ModelMessagesTypeAdapter.dump_json(messages)) // 4


def _split_point(messages: list[ModelMessage], keep_last: int) -> int:
    """Index where the kept tail starts, moved back so no tool call loses its result."""
    cut = max(1, len(messages) - keep_last)
    while cut > 1:
        prev = messages[cut - 1]
        if isinstance(prev, ModelResponse) and any(isinstance(p, ToolCallPart) for p in prev.parts):
            cut -= 1  # the results of these calls are in messages[cut]: keep the pair together
            continue
        break
    return cut


class Compactor:
    """A pydantic-ai history processor that compacts past a budget."""

    def __init__(
        self,
        model: Model,
        *,
        budget_tokens: int,
        keep_last: int = 4,
        on_compact: Callable[[WorkingSet, int], None] | None = None,
    ) -> None:
        self.budget_tokens = budget_tokens
        self.keep_last = keep_last
        self.on_compact = on_compact
        self._summarizer: Agent[None, WorkingSet] = Agent(
            model,
            output_type=WorkingSet,
            instructions=(
                "Summarize this agent conversation into a working set: the commitments made, "
                "the TODOs still open, the facts verified with tools, and every file touched. "
                "Be complete and concrete; the conversation itself will be discarded."
            ),
        )

    async def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """Compact ``messages`` if they are over budget."""
        if (
            estimate_message_tokens(messages) <= self.budget_tokens
            or len(messages) <= self.keep_last + 1
        ):
            return messages
        cut = _split_point(messages, self.keep_last)
        head, tail = messages[:cut], messages[cut:]
        transcript = ModelMessagesTypeAdapter.dump_json(head).decode()
        working = (await self._summarizer.run(f"Conversation so far (JSON):\n{transcript}")).output
        if self.on_compact:
            self.on_compact(working, estimate_message_tokens(messages))
        first = head[0]
        kept_prompt = (
            [p for p in first.parts if isinstance(p, UserPromptPart)]
            if isinstance(first, ModelRequest)
            else []
        )
        summary = ModelRequest(parts=[*kept_prompt, UserPromptPart(content=working.render())])
        return [summary, *tail]
