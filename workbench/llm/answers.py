"""The one checked-parse loop every judgment goes through.

A stage asks for a structured answer, then checks it mechanically against its evidence
(citations that must name real steps, rule ids that must exist, fields that must be filled).
An answer that fails the check gets one correction turn — the model's own answer, then a
message naming exactly what was wrong — and a second failure raises :class:`CheckFailed`
(a :class:`~workbench.llm.client.ModelError`): never a best-effort repair.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from store.records import LLMCall
from workbench.llm.client import ChatClient, Message, ModelError, ModelT

STILL_FAILS = "the model's answer still fails its check after a correction"
"""How a twice-failed answer is described unless the stage says it better."""


class CheckFailed(ModelError):
    """The answer still failed its check after the correction turn.

    Attributes:
        problems: what the check found in the last answer.
    """

    def __init__(
        self, message: str, *, purpose: str, problems: list[str], call: LLMCall | None = None
    ) -> None:
        super().__init__(message, purpose=purpose, call=call)
        self.problems = problems


def checked_answer(
    client: ChatClient,
    messages: Sequence[Message],
    response_model: type[ModelT],
    *,
    purpose: str,
    check: Callable[[ModelT], list[str]],
    correction: Callable[[list[str]], str],
    failure: str = STILL_FAILS,
    episode_id: str | None = None,
) -> ModelT:
    """The model's answer to ``messages`` once ``check`` finds nothing wrong with it.

    Args:
        client: the logged, cached model client.
        messages: the conversation (system prompt and the case).
        response_model: the structured answer's schema.
        purpose: logged with every call, and the error's prefix.
        check: what is wrong with an answer (empty when nothing is).
        correction: the correction turn's message for the problems found.
        failure: how the error describes an answer that failed twice.
        episode_id: the episode the calls are made for, if one.

    Raises:
        CheckFailed: the corrected answer still fails the check.
        ModelError: a call failed (after the client's own retries).
    """
    conversation: list[Message] = list(messages)
    for attempt in range(2):
        calls: list[LLMCall] = []
        answer = client.parse(
            conversation,
            response_model,
            purpose=purpose,
            temperature=0.0,
            episode_id=episode_id,
            calls=calls,
            turn=attempt,
        )
        problems = check(answer)
        if not problems:
            return answer
        last = calls[-1] if calls else None
        if attempt == 1:
            error = CheckFailed(
                f"{purpose}: {failure}: {'; '.join(problems)}",
                purpose=purpose,
                problems=problems,
                call=last,
            )
            raise client.give_up(error)
        said = (last.response or {}).get("content") if last else None
        conversation += [
            {"role": "assistant", "content": said or answer.model_dump_json()},
            {"role": "user", "content": correction(problems)},
        ]
    raise AssertionError("unreachable")  # pragma: no cover
