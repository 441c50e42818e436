"""One structured question, asked the way every single-shot judge asks it.

The answer must come through the output tool and fit its schema (and the judge's own
check, e.g. every rubric dimension exactly once, scores on their scales). An answer that
does not is re-asked, continuing the conversation with what was wrong, at most
``retries`` times; after that the outcome is a parse failure carrying the raw reply,
never a coerced answer. A call that got no answer (timeout, refused connection, 429, 5xx,
a cut-off body) ends the outcome with that failure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_ai import ModelRetry
from pydantic_ai.exceptions import ModelAPIError

from lhbench.models import Ask, DirectClient, PreparedRequest, Reply

__all__ = ["StructuredOutcome", "ask_structured"]

AnswerT = TypeVar("AnswerT", bound=BaseModel)


@dataclass(frozen=True)
class StructuredOutcome(Generic[AnswerT]):
    """The answer, or why there is none: a parse failure (``problem``) or a failed call."""

    answer: AnswerT | None
    reply: Reply | None
    problem: str | None = None
    failure: BaseException | None = None
    asks: int = 0

    def raw(self, tool_name: str) -> str:
        """The last reply as the model gave it ('' when none came)."""
        return self.reply.raw(tool_name) if self.reply is not None else ""


def _validation_problem(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    shown = [
        f"{'.'.join(str(p) for p in e['loc']) or 'the answer'}: {e['msg']}" for e in errors[:12]
    ]
    more = f" (and {len(errors) - 12} more)" if len(errors) > 12 else ""
    return "; ".join(shown) + more


def _check(
    reply: Reply,
    answer_type: type[AnswerT],
    check: Callable[[AnswerT], AnswerT] | None,
    tool: str,
) -> tuple[AnswerT | None, str | None, str | None]:
    """(answer, problem, feedback): the answer if it fits, else what to tell the model."""
    if reply.tool_args is None:
        problem = f"the reply did not call the {tool} tool"
        return (
            None,
            problem,
            f"Your reply did not call the `{tool}` tool. Give your answer only by calling "
            f"`{tool}` with arguments that fit its schema.",
        )
    try:
        answer = answer_type.model_validate_json(reply.tool_args)
    except ValidationError as exc:
        problem = _validation_problem(exc)
        return (
            None,
            problem,
            f"The arguments of `{tool}` do not fit its schema: {problem}. Call `{tool}` "
            "again with a corrected answer.",
        )
    if check is not None:
        try:
            answer = check(answer)
        except ModelRetry as exc:
            return None, exc.message, exc.message
    return answer, None, None


async def ask_structured(
    client: DirectClient,
    ask: Ask,
    answer_type: type[AnswerT],
    *,
    retries: int,
    check: Callable[[AnswerT], AnswerT] | None = None,
    salt: str = "",
    first: PreparedRequest | None = None,
) -> StructuredOutcome[AnswerT]:
    """Ask until the answer fits, at most ``1 + retries`` times.

    Args:
        client: The model's direct client.
        ask: The question.
        answer_type: The pydantic model the output tool's arguments must validate as.
        retries: Re-asks allowed after an answer that does not fit.
        check: A further check of a valid answer; raises ``ModelRetry`` saying what is wrong.
        salt: Cache salt (a judge's repeats must not share answers).
        first: ``ask`` already encoded (by a job preparing its requests in bulk).
    """
    tool = ask.output.name
    request = first or client.prepare(ask, salt=salt)
    reply: Reply | None = None
    problem: str | None = None
    for attempt in range(retries + 1):
        try:
            reply = await client.send(request)
        except (ModelAPIError, OSError) as exc:  # TimeoutError is an OSError
            return StructuredOutcome(None, reply, problem, exc, attempt + 1)
        answer, problem, feedback = _check(reply, answer_type, check, tool)
        if answer is not None:
            return StructuredOutcome(answer, reply, None, None, attempt + 1)
        if attempt < retries:
            request = client.prepare(request.ask.then(reply, feedback or ""), salt=salt)
    return StructuredOutcome(
        None,
        reply,
        f"Exceeded maximum retries ({retries}) for the structured answer: {problem}",
        None,
        retries + 1,
    )
