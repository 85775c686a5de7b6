"""A spec's fields with the trajectory spans they cite, and per compile attempt the
obligation × status table (closed by a slot, or open with its witness)."""

from __future__ import annotations

import os

import ipywidgets as widgets

from store import CompileAttempt, InterventionSpec, Store
from workbench.compile.specs import claims_of
from workbench.compile.witness import ObligationRow, obligation_rows
from workbench.widgets import html

OBLIGATION_HEADERS = ["schema", "obligation", "status", "slot", "witness / citations"]


def spec_option(spec: InterventionSpec) -> str:
    """``spec 4 · supported · blocked-precondition · boil``."""
    families = ", ".join(spec.families) or "–"
    return f"spec {spec.id} · {spec.status} · {spec.mechanism or '–'} · {families}"


def fields_html(spec: InterventionSpec) -> str:
    """The spec's fields (name, text, value) and the citations each makes."""
    rows = [
        (name, claim.text, claim.value, ", ".join(c.label() for c in claim.citations) or "none")
        for name, claim in claims_of(spec)
    ]
    head = ""
    if spec.status == "deferred":
        head = html.status(f"deferred: {spec.reason or 'no reason given'}", "warning")
    return head + html.table(["field", "text", "value", "cites"], rows)


def obligation_cells(row: ObligationRow) -> list[str]:
    """One obligation's cells, as HTML."""
    status = html.status(row.status, "ok" if row.closed else "error")
    why = row.witness or ", ".join(c.label() for c in row.citations)
    return [
        html.text(f"{row.position} {row.schema}"),
        html.text(row.obligation),
        status,
        html.text(row.slot or "–"),
        html.text(why),
    ]


def attempts_html(attempts: list[CompileAttempt]) -> str:
    """Every attempt's obligation table, then what it left missing and had to close."""
    if not attempts:
        return html.status("not compiled (no attempt)", "info")
    parts = []
    for attempt in attempts:
        verdict = html.mark(attempt.closed, "closes", "does not close")
        parts.append(f"<h4>{attempt.position}. {html.text(attempt.kind)} · {verdict}</h4>")
        cells = [obligation_cells(row) for row in obligation_rows([attempt])]
        parts.append(html.table(OBLIGATION_HEADERS, cells, raw=True))
        if attempt.missing:
            parts.append(html.status("missing: " + ", ".join(attempt.missing), "warning"))
        for witness in attempt.carried:
            parts.append(f"<div><i>had to close</i>: {html.text(witness)}</div>")
    return "".join(parts)


class WitnessView(widgets.VBox):
    """A spec (picked from every analysis run's specs, newest first) and its closure reports.

    Args:
        db: the database file.
        spec_id: the spec shown first (default: the newest).

    Attributes:
        spec: the spec shown; ``attempts``: its compile attempts in runtime order;
        ``rows``: their obligations as :class:`~workbench.compile.witness.ObligationRow`.
    """

    def __init__(self, db: str | os.PathLike[str], spec_id: int | None = None) -> None:
        self.store = Store(db)
        self.specs: list[InterventionSpec] = []
        self.spec: InterventionSpec | None = None
        self.attempts: list[CompileAttempt] = []
        self.rows: list[ObligationRow] = []
        self.picker = widgets.Dropdown(description="spec", layout={"width": "40em"})
        self.picker.add_class("wb-spec")
        self.fields = widgets.HTML().add_class("wb-fields")
        self.obligations = widgets.HTML().add_class("wb-obligations")
        super().__init__([self.picker, self.fields, self.obligations])
        self.add_class("wb-witness")
        self.picker.observe(lambda change: self.show(change["new"]), names="value")
        self.refresh(spec_id)

    def refresh(self, spec_id: int | None = None) -> None:
        """Read the specs again and show ``spec_id`` (default: the one shown, else the newest)."""
        wanted = spec_id if spec_id is not None else self.picker.value
        self.specs = self.store.specs()
        ids = [s.id for s in self.specs]
        self.picker.options = [(spec_option(s), s.id) for s in self.specs]
        chosen = wanted if wanted in ids else (ids[0] if ids else None)
        self.picker.value = chosen
        self.show(chosen)

    def show(self, spec_id: int | None) -> None:
        """Show one spec's fields and attempts."""
        self.spec = next((s for s in self.specs if s.id == spec_id), None)
        if self.spec is None or spec_id is None:
            self.attempts, self.rows = [], []
            self.fields.value = html.status("no spec yet: compile a cluster first", "info")
            self.obligations.value = ""
            return
        self.attempts = self.store.attempts(spec_id)
        self.rows = obligation_rows(self.attempts)
        self.fields.value = fields_html(self.spec)
        self.obligations.value = attempts_html(self.attempts)

    def close(self) -> None:
        """Close the widget and its store."""
        super().close()
        self.store.close()
