"""Language models: what every judging stage shares — the chat-completions client every model
call goes through (:mod:`~workbench.llm.client`), steps as prompts show them
(:mod:`~workbench.llm.steps`) and the one checked-parse loop (:mod:`~workbench.llm.answers`).
The judgments themselves belong to their stages (``analyze``, ``compile``, ``manual``)."""

from workbench.llm.client import ChatClient, ConfigError, ModelError, prompt_hash

__all__ = ["ChatClient", "ConfigError", "ModelError", "prompt_hash"]
