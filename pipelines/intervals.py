"""The spans one edge's statements cover, before any functional relationship is judged. Pure.

Each statement of a fact is an interval (pipelines/dates.py reads it from the text): it starts
at its valid_from, else when it was asserted, else when Engram learned it; it ends at its stated
valid_to, or, when the text says it is over without a date ("was", "former"), when it was
asserted (else learned). A stated end closes the statements of the same edge still open at
that end; a later start reopens the fact (a statement starting after that end is not closed by
it). A statement of an end only ("revoked in 2017", valid_to alone) is not an interval of its
own: it spans what it closed ([2008, 2017) after "signed in 2008"). An end that closes nothing
spans everything before it (start unknown: None) when nothing of the edge starts earlier;
otherwise it adds no time (an empty span at that end).

Nothing else cuts a statement: for relationships not declared functional these spans are the
final ones (two overlapping employers keep both stated ends); functional ones are judged on
them by pipelines/maintenance/supersession.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from engram.pipelines.dates import utc

Span = tuple[datetime | None, datetime | None]  # (start, end); None start: unknown, None end: open


@dataclass(frozen=True)
class Statement:
    """One statement of one edge, as stated (the stored interval row's stated columns)."""

    id: Any
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    ended: bool = False
    asserted: datetime | None = None
    learned: datetime | None = None

    @property
    def end_only(self) -> bool:
        return self.valid_from is None and self.valid_to is not None


def _opt(value: datetime | None) -> datetime | None:
    return None if value is None else utc(value)


def _own(s: Statement) -> Span:
    """A statement's span from its own words alone."""
    start = _opt(s.valid_from) or _opt(s.asserted) or _opt(s.learned)
    if s.valid_to is not None:
        return start, utc(s.valid_to) if start is None else max(utc(s.valid_to), start)
    if s.ended:  # over, end unknown: it had ended by the time it was said (else learned)
        later = [t for t in (_opt(s.asserted), _opt(s.learned)) if t is not None and (start is None or t > start)]
        return start, (later[0] if later else start)
    return start, None


def spans(statements: Iterable[Statement]) -> dict[Any, Span]:
    """(start, end) of every statement of ONE edge; None start = unknown, None end = open."""
    stated = list(statements)
    closing = closers(stated)
    out: dict[Any, Span] = {}
    closed_by: dict[datetime, list[datetime]] = {}
    for s in stated:
        if s.end_only:
            continue
        start, stop = _own(s)
        if s.id in closing:
            stop = closing[s.id]
            closed_by.setdefault(stop, []).append(start)  # type: ignore[arg-type]
        out[s.id] = (start, stop)
    known = [start for start, _ in out.values() if start is not None]
    for s in stated:
        if s.end_only:
            end = utc(s.valid_to)  # type: ignore[arg-type]
            starts = closed_by.get(end)
            if starts:
                out[s.id] = (min(starts), end)
            elif any(start < end for start in known):
                out[s.id] = (end, end)  # an end repeated later, or after the fact had ended: adds no time
            else:
                out[s.id] = (None, end)
    return out


def closers(statements: Iterable[Statement]) -> dict[Any, datetime]:
    """The end that closes each statement with no stated end of its own: the first end the
    same edge states after its start (alone, or of a range: "from 2008 to 2017"), if before
    the end its tense implies."""
    stated = list(statements)
    ends = sorted({utc(s.valid_to) for s in stated if s.valid_to is not None})
    out: dict[Any, datetime] = {}
    if not ends:
        return out
    for s in stated:
        if s.valid_to is not None:
            continue
        start, stop = _own(s)
        if start is None:
            continue
        closer = next((t for t in ends if t > start), None)
        if closer is not None and (stop is None or closer < stop):
            out[s.id] = closer
    return out


def unjudged_spans(statements: Iterable[Statement]) -> dict[Any, Span]:
    """Spans of ONE edge's statements as recall reads them when no supersession pass judges the
    relationship: as stated (start: valid_from, else when asserted; end: valid_to), except that
    an end stated alone closes the edge's open statements and spans what it closed."""
    stated = list(statements)
    spanned, closing = spans(stated), closers(stated)
    out: dict[Any, Span] = {}
    for s in stated:
        if s.end_only:
            out[s.id] = spanned[s.id]
        else:
            out[s.id] = (_opt(s.valid_from) or _opt(s.asserted), closing.get(s.id, _opt(s.valid_to)))
    return out


def by_edge(rows: Iterable[Any], edge_of, statement_of, span=spans) -> dict[Any, Span]:
    """Spans of every row by its statement id, computed edge by edge (`edge_of(row)`,
    `statement_of(row)`) with `span` (spans, or unjudged_spans)."""
    groups: dict[str, list[Statement]] = {}
    for row in rows:
        groups.setdefault(str(edge_of(row)), []).append(statement_of(row))
    out: dict[Any, Span] = {}
    for members in groups.values():
        out.update(span(members))
    return out
