"""SQL fragments recall's reads share: the fact filter, the year rule, the chunk columns and the
temporal window over edges."""

from __future__ import annotations

from engram.models.search import EdgeWindow
from engram.pipelines.dates import YEAR
from engram.pipelines.facts import CONTAINS, CONTRADICTS, NOT_FACTS


def facts_only(column: str = "g.relationship") -> str:
    """SQL: the edge is a fact (which edges are: pipelines/facts)."""
    return f"{column} NOT IN ({', '.join(repr(r) for r in sorted(NOT_FACTS))})"


def kind_is(kind: str, column: str = "g.relationship") -> str:
    """SQL: the edge is of this structural kind (pipelines/facts: CONTAINS, CONTRADICTS)."""
    assert kind in NOT_FACTS, kind
    return f"{column} = {kind!r}"


MENTIONS = kind_is(CONTAINS)  # a chunk -> entity edge
CONFLICT = kind_is(CONTRADICTS)  # a contradiction between two facts


NOT_FACT = facts_only()
# The one year rule (pipelines/dates.YEAR, a regex Postgres reads too) as a whole word.
YEAR_RE = rf"\m({YEAR})\M"
CHUNK_COLUMNS = (
    "c.id, c.text, c.document_id, c.dataset_id, c.chunk_index, c.importance, c.truth_alignment,"
    " c.truth_epoch, c.truth_signature, d.data_item_id, d.title, c.occurred_at, c.speakers"
)


def window_sql(window: EdgeWindow, alias: str = "g", *, exact: bool = True) -> tuple[str, dict]:
    """SQL condition choosing the edges a window admits.

    as_of: valid_from <= as_of < valid_to, open ends allowed. An edge with no valid_from that
    superseded others became valid when they stopped being valid (their valid_to); a
    superseded edge with no valid_to ended at its last update. `exact=False` leaves out the
    correlated sub-query (for index scans); the exact filter is applied when rows are read.
    """
    g = alias
    if window.as_of is not None:
        ends = f"COALESCE({g}.valid_to, CASE WHEN {g}.superseded THEN {g}.updated_at END)"
        cond = f" AND ({ends} IS NULL OR {ends} > :as_of)"
        if exact:
            starts = (f"COALESCE({g}.valid_from, (SELECT min(l.valid_to) FROM edges l"
                      f" WHERE l.superseded_by = {g}.id AND l.dataset_id = {g}.dataset_id))")
            cond += f" AND ({starts} IS NULL OR {starts} <= :as_of)"
            # Within the edge's span, one of its intervals must hold (a re-elected mayor's gap).
            cond += (f" AND (NOT EXISTS (SELECT 1 FROM edge_intervals i WHERE i.edge_id = {g}.id)"
                     f" OR EXISTS (SELECT 1 FROM edge_intervals i WHERE i.edge_id = {g}.id"
                     " AND (i.starts_at IS NULL OR i.starts_at <= :as_of) AND (i.ends_at IS NULL OR i.ends_at > :as_of)))")
        return cond, {"as_of": window.as_of}
    if window.include_history:
        return "", {}
    return f" AND NOT {g}.superseded AND ({g}.valid_to IS NULL OR {g}.valid_to > now())", {}
