"""The one backend choice every face makes: a configuration turned into the stage backends.

Every judgment of the pipeline is a method of the protocol its stage defines (the analyst,
the compiler, the manual's formulator and builder, synthesis' task proposer, relabeler and
retrieval query writer); :func:`make_backends` builds all of them for one backend, bound to one
store. The CLI, the terminal UI and the notebook widgets call it, so a choice made once holds
for every face. The backend is chosen by, in order:

1. an explicit choice (``--reasoner``);
2. the environment variable ``WORKBENCH_REASONER``;
3. ``backend`` in the ``[reasoner]`` table of a ``workbench.toml`` beside the database;
4. ``heuristic``.

The ``openai`` backend reads its endpoint from ``OPENAI_BASE_URL`` and ``WORKBENCH_MODEL``, else
from ``base_url`` and ``model`` in that table, and its key from the environment variable that
``api_key_env`` names (``OPENAI_API_KEY`` by default). The key itself is never written to the
file: a table that holds one is refused. ``WORKBENCH_MAX_TOKENS`` and ``WORKBENCH_TIMEOUT``,
when set, cap every reply and HTTP request (a small local model needs both);
``WORKBENCH_CONTEXT_TOKENS``, the model's context window, has the analyst cut its prompts to fit
it. :func:`analyst_of` sets the analyst's strategy and whole-run call budget.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args
from urllib.parse import urlparse

from store import Store
from workbench.llm.client import (
    ENV_API_KEY,
    ENV_BASE_URL,
    ENV_MODEL,
    ChatClient,
    ConfigError,
    client_options,
)

if TYPE_CHECKING:  # the stages load when backends are made, not when a choice is resolved
    from workbench.analyze.analyst import Analyst
    from workbench.compile.proposals import Compiler
    from workbench.manual.builder import Builder
    from workbench.manual.formulate import Formulator
    from workbench.synth.proposer import Proposer
    from workbench.synth.queries import QueryWriter
    from workbench.synth.relabeler import Relabeler

BackendName = Literal["heuristic", "openai"]
BACKENDS: tuple[str, ...] = get_args(BackendName)
ENV_REASONER = "WORKBENCH_REASONER"
CONFIG_FILE = "workbench.toml"
TABLE = "reasoner"
KEYS = ("backend", "base_url", "model", "api_key_env")
"""The keys a ``[reasoner]`` table may hold."""
ENV_CONTEXT_TOKENS = "WORKBENCH_CONTEXT_TOKENS"
"""The model's context window in tokens (optional): the analyst fits its prompts to it."""


@dataclass(frozen=True)
class ReasonerConfig:
    """Which backend judges, and for ``openai`` where its endpoint is (never the key)."""

    backend: BackendName
    """``heuristic`` (offline) or ``openai`` (an OpenAI-compatible endpoint)."""
    source: str
    """Where the choice came from: ``--reasoner``, ``WORKBENCH_REASONER``, the file, or
    ``default``."""
    base_url: str = ""
    """The endpoint root, e.g. ``http://127.0.0.1:8000/v1`` (``openai`` only)."""
    model: str = ""
    """The model name sent to the endpoint (``openai`` only)."""
    api_key_env: str = ENV_API_KEY
    """The environment variable holding the endpoint's key."""

    def describe(self) -> str:
        """``heuristic``, or ``openai · <model> @ <host>``."""
        if self.backend == "heuristic":
            return "heuristic"
        return f"openai · {self.model} @ {urlparse(self.base_url).netloc or self.base_url}"


@dataclass(frozen=True)
class Backends:
    """The stage backends of one choice, bound to one store."""

    config: ReasonerConfig
    analyst: Analyst
    """Analyses failures (the analysis stage)."""
    compiler: Compiler
    """Proposes specs and contracts (compilation)."""
    formulator: Formulator
    """Groups the rules into the manual's chapters (formulation)."""
    builder: Builder
    """Reads episodes into rule operations and consolidates them (the manual's building)."""
    relabeler: Relabeler
    """Writes instructions backward for spans and votes on examples (synthesis)."""
    query_writer: QueryWriter
    """Writes the model-based retrieval query of synthesized examples (synthesis)."""
    proposer: Proposer
    """Proposes task instructions from a world's documentation (synthesis' self-instruct)."""

    @property
    def name(self) -> str:
        """The backend: ``heuristic`` or ``openai``."""
        return self.config.backend

    def describe(self) -> str:
        """``heuristic``, or ``openai · <model> @ <host>``."""
        return self.config.describe()


def make_backends(
    store: Store, choice: str | None = None, *, environ: Mapping[str, str] | None = None
) -> Backends:
    """The stage backends the configuration chooses, on ``store`` (whose database's
    directory may hold a ``workbench.toml``).

    Raises:
        ConfigError: the choice is unknown, the file is unreadable, or the ``openai`` endpoint
            is not fully configured (one line naming what is missing and where it was looked).
    """
    env = os.environ if environ is None else environ
    return backends_from(store, reasoner_config(store.path, choice, environ=env), environ=env)


def backends_from(
    store: Store, config: ReasonerConfig, *, environ: Mapping[str, str] | None = None
) -> Backends:
    """The stage backends of an already resolved ``config``, on ``store``.

    Raises:
        ConfigError: the key's environment variable is not set (``openai``).
    """
    if config.backend == "heuristic":
        return heuristic_backends(store, config)
    env = os.environ if environ is None else environ
    api_key = env.get(config.api_key_env, "")
    if not api_key:
        raise ConfigError(_no_key(config.api_key_env))
    client = ChatClient(
        store,
        model=config.model,
        api_key=api_key,
        base_url=config.base_url,
        **client_options(env),
    )
    return openai_backends(client, config)


def heuristic_backends(store: Store, config: ReasonerConfig | None = None) -> Backends:
    """The offline, deterministic backends on ``store``."""
    from workbench.analyze.heuristic import HeuristicAnalyst
    from workbench.compile.heuristic import HeuristicCompiler
    from workbench.manual.heuristic import HeuristicFormulator
    from workbench.manual.heuristic_builder import HeuristicBuilder
    from workbench.synth.heuristic_proposer import HeuristicProposer
    from workbench.synth.heuristic_queries import HeuristicQueryWriter
    from workbench.synth.heuristic_relabeler import HeuristicRelabeler

    return Backends(
        config=config or ReasonerConfig(backend="heuristic", source="default"),
        analyst=HeuristicAnalyst(store),
        compiler=HeuristicCompiler(),
        formulator=HeuristicFormulator(),
        builder=HeuristicBuilder(store),
        relabeler=HeuristicRelabeler(),
        query_writer=HeuristicQueryWriter(),
        proposer=HeuristicProposer(),
    )


def openai_backends(client: ChatClient, config: ReasonerConfig | None = None) -> Backends:
    """The model-backed backends, all on one client (its store logs and caches the calls)."""
    from workbench.compile.openai import OpenAICompiler  # model-backed stages load when chosen
    from workbench.manual.openai import OpenAIFormulator
    from workbench.manual.openai_builder import OpenAIBuilder
    from workbench.synth.openai_proposer import OpenAIProposer
    from workbench.synth.openai_queries import OpenAIQueryWriter
    from workbench.synth.openai_relabeler import OpenAIRelabeler

    config = config or ReasonerConfig(
        backend="openai", source="client", base_url=client.base_url or "", model=client.model
    )
    return Backends(
        config=config,
        analyst=openai_analyst(client),
        compiler=OpenAICompiler(client),
        formulator=OpenAIFormulator(client),
        builder=OpenAIBuilder(client),
        relabeler=OpenAIRelabeler(client),
        query_writer=OpenAIQueryWriter(client),
        proposer=OpenAIProposer(client),
    )


def openai_analyst(
    client: ChatClient,
    strategy: str | None = None,
    max_calls: int | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> Analyst:
    """The model-backed analyst on ``client``: its strategy (default ``all-at-once``), a budget
    of ``max_calls`` model calls for everything it analyses (``None``: no limit), and the
    model's context from ``WORKBENCH_CONTEXT_TOKENS`` when that is set.

    Raises:
        ConfigError: the context variable is not a positive whole number, or leaves no room
            for a prompt; the strategy is unknown or the budget below one call.
    """
    from workbench.analyze.openai import OpenAIAnalyst
    from workbench.analyze.strategies import DEFAULT_STRATEGY

    env = os.environ if environ is None else environ
    text = env.get(ENV_CONTEXT_TOKENS, "").strip()
    context = int(text) if text.isdigit() else None
    if text and not context:
        raise ConfigError(f"{ENV_CONTEXT_TOKENS} must be a positive whole number, not {text!r}")
    try:
        return OpenAIAnalyst(
            client,
            strategy=strategy or DEFAULT_STRATEGY,  # type: ignore[arg-type]  # checked there
            max_calls=max_calls,
            context_tokens=context,
        )
    except ValueError as error:
        where = f" ({ENV_CONTEXT_TOKENS})" if context and "context" in str(error) else ""
        raise ConfigError(f"{error}{where}") from None


def analyst_of(
    backends: Backends,
    strategy: str | None = None,
    max_calls: int | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> Analyst:
    """``backends``' analyst, or, given a strategy or a call budget, the ``openai`` analyst on
    the same client set to them (a run of another strategy is another analysis run: its name
    says the strategy).

    Raises:
        ConfigError: a strategy or a budget for the heuristic backend, which asks no model;
            as :func:`openai_analyst`.
    """
    if strategy is None and max_calls is None:
        return backends.analyst
    client = getattr(backends.analyst, "client", None)
    if backends.name != "openai" or not isinstance(client, ChatClient):
        raise ConfigError(
            "a strategy and a call budget are the openai reasoner's: the heuristic asks no model"
        )
    return openai_analyst(client, strategy, max_calls, environ=environ)


# -- resolving the configuration -------------------------------------------------------------


def config_file(db_path: str | os.PathLike[str]) -> Path | None:
    """The ``workbench.toml`` beside the database (``None`` for an in-memory one)."""
    if str(db_path) == ":memory:":
        return None
    return Path(db_path).resolve().parent / CONFIG_FILE


def reasoner_config(
    db_path: str | os.PathLike[str],
    choice: str | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> ReasonerConfig:
    """The backend choice for the database at ``db_path``, resolved in the documented order.

    Raises:
        ConfigError: as :func:`make_backends` (one line).
    """
    env = os.environ if environ is None else environ
    path = config_file(db_path)
    table = read_table(path)
    backend, source = _chosen(choice, env, table, path)
    if backend == "heuristic":
        return ReasonerConfig(backend="heuristic", source=source)
    return _openai_config(source, env, table, path)


def read_table(path: Path | None) -> dict[str, str]:
    """The ``[reasoner]`` table of ``path`` (empty when there is no such file or table).

    Raises:
        ConfigError: the file is not valid TOML (with its line), or the table holds a key it
            may not (the key itself, an unknown key, a value that is not a string).
    """
    if path is None or not path.is_file():
        return {}
    try:
        table = tomllib.loads(path.read_text(encoding="utf-8")).get(TABLE, {})
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{path}: {error}") from None
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [{TABLE}] must be a table")
    return _checked(table, path)


def _checked(table: dict[str, Any], path: Path) -> dict[str, str]:
    for key, value in table.items():
        if key == "api_key":
            raise ConfigError(
                f"{path}: [{TABLE}] must not hold the key itself; name the environment "
                f'variable that holds it instead, e.g. api_key_env = "{ENV_API_KEY}"'
            )
        if key not in KEYS:
            raise ConfigError(f"{path}: [{TABLE}] has no key {key!r} (keys: {', '.join(KEYS)})")
        if not isinstance(value, str):
            raise ConfigError(f"{path}: [{TABLE}] {key} must be a string")
    return table


def _chosen(
    choice: str | None, env: Mapping[str, str], table: dict[str, str], path: Path | None
) -> tuple[BackendName, str]:
    """The backend and where it was chosen."""
    for value, source in (
        (choice, "--reasoner"),
        (env.get(ENV_REASONER), ENV_REASONER),
        (table.get("backend"), f"backend in [{TABLE}] of {path}"),
    ):
        if value:
            if value not in BACKENDS:
                raise ConfigError(
                    f"unknown reasoner {value!r} (from {source}): choose {' or '.join(BACKENDS)}"
                )
            return value, source  # type: ignore[return-value]
    return "heuristic", "default"


def _openai_config(
    source: str, env: Mapping[str, str], table: dict[str, str], path: Path | None
) -> ReasonerConfig:
    """The ``openai`` endpoint from the environment, else the file; one line per gap."""
    where = f" or {{key}} in [{TABLE}] of {path}" if path is not None else ""
    base_url = env.get(ENV_BASE_URL) or table.get("base_url", "")
    model = env.get(ENV_MODEL) or table.get("model", "")
    key_env = table.get("api_key_env") or ENV_API_KEY
    if not base_url:
        raise ConfigError(
            f"the openai reasoner needs an endpoint: set {ENV_BASE_URL}"
            + where.format(key="base_url")
            + " (e.g. https://api.openai.com/v1)"
        )
    if not model:
        raise ConfigError(
            f"the openai reasoner needs a model: set {ENV_MODEL}" + where.format(key="model")
        )
    if not env.get(key_env):
        raise ConfigError(_no_key(key_env))
    return ReasonerConfig(
        backend="openai", source=source, base_url=base_url, model=model, api_key_env=key_env
    )


def _no_key(variable: str) -> str:
    return (
        f"the openai reasoner needs the endpoint's key: export {variable} "
        "(any non-empty value for a local server that needs none)"
    )
