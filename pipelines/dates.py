"""The one date rule: how Engram reads time in text and compares it (extraction, supersession,
contradiction check and recall all use this module). Pure.

A date is a `When`: the first instant of a period (UTC) and its precision (year, month, day),
so "2015" < "March 2015" < "3 March 2015" order by their starts and print as written. Periods
are half-open: a fact valid "from 2015 to 2022" holds on 31 December 2021, not on 1 January 2022.

`stated_interval` reads the words that state a fact ("in 2011", "since March 2015", "from 2015
to 2022", "until 2019", "was", "became", "re-elected", "former", full dates, years before 1900)
into a `Stated` interval. `aspect_words` strips those tense/change words from a relationship
phrase so "became mayor of", "was re-elected mayor of" and "former mayor of" are one relationship.
Single date expressions are converted by python-dateutil; finding them in text is ours.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from dateutil import parser as _dateutil

Precision = Literal["year", "month", "day"]
_RANK = {"year": 0, "month": 1, "day": 2}
_MONTH_NAMES = ("January February March April May June July August September October November "
                "December").split()

_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
          r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)")
# The one year rule: 1000-2099 (years before 1900 are years too: "from 1850"). Extraction,
# supersession, contradiction, the router's votes and TEMPORAL recall (chunks.years, and the
# years in an edge's text) all read years with it.
YEAR = r"1\d{3}|20\d{2}"
YEARS = (1000, 2099)  # the first and last year YEAR matches
# "1200 employees" is a count, not a year.
COUNTED = ("employees|people|persons|staff|workers|members|users|customers|students|units|items|copies|"
            "km|miles|meters|metres|feet|tons|tonnes|dollars|euros|pounds|votes|seats|pages|words|times")
# A year standing alone, not an amount: "€1500", "1000 euros", "1200 employees", "2000.50", "1999%".
LONE_YEAR = rf"(?<![\w$£€.,])(?:{YEAR})(?![\w%]|[.,]\d)(?!\s+(?:{COUNTED})\b)"
_DATE = re.compile(
    rf"(?<![\w$£€.,])(?:"
    rf"(?P<mdy>{_MONTH}\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+(?:{YEAR}))"
    rf"|(?P<dmy>\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\.?,?\s+(?:{YEAR}))"
    rf"|(?P<my>{_MONTH}\.?,?\s+(?:of\s+)?(?:{YEAR}))"
    rf"|(?P<iso>(?:{YEAR})-[01]\d(?:-[0-3]\d)?)"
    rf"|(?P<y>{YEAR})"
    rf")(?![\w%]|[.,]\d)(?!\s+(?:{COUNTED})\b)",
    re.IGNORECASE,
)
# Words just before a date that make it the end of the interval.
_UNTIL = re.compile(r"\b(?:until|till|til|through|thru|up\s+to|ended\s+in|left\s+in|retired\s+in|resigned\s+in|"
                    r"stepped\s+down\s+in|left\s+office\s+in)\s+(?:(?:early|mid|late)\s+)?$", re.I)
_RANGE_TO = re.compile(r"(?:\b(?:to|and)\s+|[-\u2013\u2014]\s*)$", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")

# Tense and change-of-state words (lower case, as words of a relationship phrase).
STARTS = frozenset("""became become becomes becoming elected re-elected reelected re_elected appointed
    reappointed re-appointed named renamed promoted sworn inaugurated installed hired chosen returned
    takes took taken assumed assumes""".split())
ENDS = frozenset("former formerly ex ex- previously once served serves onetime erstwhile".split())
# Verbs that end a fact: the date they carry is its end ("resigned as CEO of Corvex in 2017").
STOPS = frozenset("""revoked revokes rescinded withdrew withdrawn withdraws resigned resigns quit quits left
    leaves ended ends retired retires ceased ceases terminated terminates stepped steps departed""".split())
PAST = frozenset("was were had".split())
_SECOND_WORDS = frozenset("over in as down from".split())  # "took over as", "sworn in as", "stepped down as"
_SINCE = re.compile(r"\b(?:since|from|starting|as\s+of|effective)\s+(?:(?:early|mid|late)\s+)?$", re.I)


@dataclass(frozen=True, order=True)
class When:
    at: datetime  # the first instant of the period, UTC
    precision: Precision = "day"

    @property
    def end(self) -> datetime:
        """The first instant after the period."""
        if self.precision == "year":
            return self.at.replace(year=self.at.year + 1)
        if self.precision == "month":
            y, m = divmod(self.at.month, 12)
            return self.at.replace(year=self.at.year + y, month=m + 1)
        return self.at + timedelta(days=1)

    def iso(self) -> str:
        """"2015", "2015-03" or "2015-03-04": the date as precise as it was written."""
        if self.precision == "year":
            return f"{self.at.year:04d}"
        if self.precision == "month":
            return f"{self.at.year:04d}-{self.at.month:02d}"
        return f"{self.at.year:04d}-{self.at.month:02d}-{self.at.day:02d}"

    def text(self) -> str:
        if self.precision == "year":
            return str(self.at.year)
        if self.precision == "month":
            return f"{_MONTH_NAMES[self.at.month - 1]} {self.at.year}"
        return f"{self.at.day} {_MONTH_NAMES[self.at.month - 1]} {self.at.year}"


def when(year: int, month: int | None = None, day: int | None = None) -> When:
    precision: Precision = "day" if day else "month" if month else "year"
    return When(datetime(year, month or 1, day or 1, tzinfo=UTC), precision)


def stored(at: datetime | None, precision: str | None = None) -> When | None:
    """A stored timestamp back as a When: at its recorded precision, else as precise as it looks
    (1 January is a year, the 1st a month: what a computed end inherits from a stated start)."""
    if at is None:
        return None
    at = utc(at)
    if precision in _RANK:
        return When(at, precision)  # type: ignore[arg-type]
    if (at.month, at.day) == (1, 1) and at.time() == datetime.min.time():
        return When(at, "year")
    return When(at, "month" if at.day == 1 and at.time() == datetime.min.time() else "day")


def utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def parse_when(value: str | datetime | When | None) -> When | None:
    """An ISO date at its precision ("2015", "2015-03", "2015-03-04", a full timestamp) or a
    written date ("March 2015", "3 March 2015"); None when it is not a date."""
    if value is None or isinstance(value, When):
        return value
    if isinstance(value, datetime):
        return When(utc(value), "day")
    text = " ".join(str(value).split()).strip()
    if not text:
        return None
    m = re.fullmatch(rf"({YEAR})(?:-(\d{{2}})(?:-(\d{{2}})(?:[T ].*)?)?)?", text)
    if m:
        y, mo, d = (int(g) if g else None for g in m.groups())
        try:
            return when(y, mo, d)  # type: ignore[arg-type]
        except ValueError:
            return None
    found = find_dates(text)
    return found[0][1] if found else None


@functools.lru_cache(maxsize=4096)
def _convert(kind: str, text: str) -> When | None:
    # dateutil fills missing fields from `default`: two defaults tell which fields were written.
    # Memoised (a pure function with an immutable answer): the same few date phrases come back
    # for every fact of a chunk, and each costs two dateutil parses.
    try:
        a = _dateutil.parse(text, default=datetime(1, 1, 1))
        b = _dateutil.parse(text, default=datetime(2, 2, 2))
    except (ValueError, OverflowError):
        return None
    if a.year != b.year:
        return None
    if kind == "y":
        return when(a.year)
    if a.month != b.month:
        return when(a.year)
    return when(a.year, a.month) if a.day != b.day else when(a.year, a.month, a.day)


def find_dates(text: str | None) -> list[tuple[tuple[int, int], When]]:
    """Every date expression in the text with its span, in order."""
    out = []
    for m in _DATE.finditer(text or ""):
        kind = m.lastgroup or "y"
        value = _convert(kind, m.group(0).replace(" of ", " "))
        if value is not None:
            out.append((m.span(), value))
    return out


def years_named(text: str | None) -> list[int]:
    """Every distinct year the text's dates name, ascending (recall's indexed chunks.years)."""
    return sorted({w.at.year for _, w in find_dates(text)})


def latest(text: str | None) -> When | None:
    return _latest(w for _, w in find_dates(text))


def _latest(found: Iterable[When]) -> When | None:
    return max(found, key=lambda w: (w.at, _RANK[w.precision]), default=None)


@dataclass(frozen=True)
class Stated:
    """A fact's validity as its own words state it, and when they were said (a lower bound:
    the latest date they name)."""

    valid_from: When | None = None
    valid_to: When | None = None
    ended: bool = False  # the words say it is over: was, former, until, from ... to
    asserted: When | None = None

    def merged(self, fallback: Stated) -> Stated:
        """Fields missing here taken from `fallback` (the LLM's fields first, then the text).
        A fallback date on the wrong side of a date given here belongs to another fact of the
        sentence, or is this end read as a start: "revoked in 2017" given as valid_to 2017 is
        not also valid_from 2017, and "lives in Lima since 2019" does not end in 2019."""
        start, end, ended = fallback.valid_from, fallback.valid_to, fallback.ended
        if self.valid_to is not None and start is not None and start.at >= self.valid_to.at:
            start = None
        if self.valid_from is not None and end is not None and end.at <= self.valid_from.at:
            end, ended = None, False
        return Stated(self.valid_from or start, self.valid_to or end,
                      self.ended or ended or (self.valid_to or end) is not None,
                      max((w for w in (self.asserted, fallback.asserted) if w), default=None))


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z]+(?:-[a-z]+)*", text.lower())


def stated_interval(text: str | None) -> Stated:
    """The interval the words of one fact state. The first date after since/from/as of starts
    it, a date after until/to/through (or the second of "from A to B", "A-B") ends it; a date
    with no such word starts it, unless a verb that ends a fact ("revoked", "resigned", "left")
    carries it and no change verb starts one. "was" without a change verb, "former", "served"
    or an end date mean the fact is over."""
    text = text or ""
    dates = find_dates(text)
    words = _words(text)
    starts = bool(set(words) & STARTS)
    # "revoked ... in 2017" with no change verb: the date ends the fact, it does not start it.
    stops = not starts and bool(set(words) & STOPS)
    start: When | None = None
    end: When | None = None
    for (a, _), value in dates:
        before = text[max(0, a - 24):a]
        if _UNTIL.search(before):
            end = end or value
        elif _RANGE_TO.search(before) and start is not None and end is None:
            end = value  # the second date of "from A to B", "between A and B", "A-B"
        elif stops and start is None and end is None and not _SINCE.search(before):
            end = value
        elif start is None:
            start = value
    ended = (end is not None or bool(set(words) & ENDS) or (not starts and _past_state(words))
             or _then_holder(text))
    if start is not None and end is not None and end.at <= start.at and end.end > start.at:
        end = When(end.end, end.precision)  # "from 2015 to 2015": through the end of that period
    return Stated(start, end, ended, _latest(w for _, w in dates))


_THEN = re.compile(r",\s*then\s+(?:the\s+)?([a-z-]+)", re.I)


def _then_holder(text: str) -> bool:
    """"Alice Moreau, then CEO of Acme, ...": a post held at that time, not now (not "..., then
    moved to Lima", a next event)."""
    return any(not w.lower().endswith("ed") and w.lower() not in STARTS for w in _THEN.findall(text))


def _past_state(words: list[str]) -> bool:
    """"was mayor" states a past state; "was founded", "was elected" are passive events."""
    for i, w in enumerate(words):
        if w in PAST:
            following = [x for x in words[i + 1:i + 3] if x not in ("the", "a", "an", "also", "then")]
            nxt = following[0] if following else ""
            if nxt and not nxt.endswith(("ed", "en", "wn")) and nxt not in STARTS and nxt != "been":
                return True
    return False


def aspect_words(words: Sequence[str]) -> tuple[list[str], bool, bool]:
    """Relationship words without tense/change words: (kept, starts, ended).

    "became mayor of" -> (["mayor", "of"], True, False); "former ceo of" and ", then ceo of" ->
    (["ceo", "of"], False, True). A phrase made only of such words is kept as it is ("took over")."""
    kept: list[str] = []
    starts = ended = False
    skip_second = False
    for i, w in enumerate(words):
        low = w.lower()
        if i == 0 and low == "then":  # "Alice Moreau, then CEO of Acme": CEO at that time, not now
            ended = True
            continue
        if skip_second and low in _SECOND_WORDS:
            skip_second = low in ("over", "down")  # "took over as", "stepped down as": both words go
            continue
        skip_second = False
        if low in STARTS:
            starts, skip_second = True, True
        elif low in ENDS or low in STOPS:
            ended, skip_second = True, low in ("served", "serves") or low in STOPS
        elif low in PAST:
            ended = True
        elif low == "first" and ended and not kept:
            continue  # "served as the first CEO of": a holder of the post, in the past
        else:
            kept.append(w)
    if not kept:
        return list(words), False, False
    return kept, starts, ended and not starts


def sentences_naming(texts: Iterable[str], names: Iterable[str]) -> list[str]:
    """The sentences of the texts that name every one of the names (case-insensitive)."""
    wanted = [n.replace("_", " ").casefold() for n in names if n and n.strip()]
    if not wanted:
        return []
    return [s for t in texts for s in _SENTENCE_END.split(t) if all(n in s.casefold() for n in wanted)]


# ------------------------------------------------------------------ queries and rendering

_Q_BETWEEN = re.compile(r"\b(?:between|from)\s+(.{4,24}?)\s+(?:and|to|until|till|-)\s+(.{4,24}?)(?=$|[\s?.,!;])",
                        re.I)
_Q_BOUND = re.compile(r"\b(before|until|till|through|after|since|as\s+of|in|during|on)\s+$", re.I)


def query_window(question: str) -> tuple[When, When] | None:
    """The period a question asks about, as (first, last) dates, both inclusive at their
    precision; None when it names no date. The same phrases as extraction: "between A and
    B", "from A to B", "since", "after", "before", "until", "in"."""
    m = _Q_BETWEEN.search(question)
    if m:
        a, b = parse_when(m.group(1)), parse_when(m.group(2))
        if a and b:
            return (a, b) if a.at <= b.at else (b, a)
    dates = find_dates(question)
    if not dates:
        return None
    if len(dates) == 1:
        (a, _), value = dates[0]
        bound = _Q_BOUND.search(question[max(0, a - 12):a])
        word = bound.group(1).lower().split()[0] if bound else ""
        if word == "before":
            return (MIN_WHEN, When(value.at - timedelta(days=1), "day"))
        if word in ("until", "till", "through"):
            return (MIN_WHEN, value)
        if word == "after":
            return (When(value.end, "day"), MAX_WHEN)
        if word in ("since", "as"):
            return (value, MAX_WHEN)
    values = [w for _, w in dates]
    return (min(values, key=lambda w: w.at), max(values, key=lambda w: w.end))


MIN_WHEN = when(1)
MAX_WHEN = when(9999)


def window_bounds(window: tuple[When, When]) -> tuple[datetime, datetime]:
    """[start, end) instants of an inclusive (first, last) window."""
    first, last = window
    return first.at, last.end if last.at.year < 9999 else datetime(9999, 12, 31, 23, 59, 59, tzinfo=UTC)


def span_text(start: When | None, end: When | None, open_: bool) -> str:
    if start and end:
        return f"{start.text()}\u2013{end.text()}" if start.text() != end.text() else start.text()
    if start:
        return f"since {start.text()}" if open_ else f"from {start.text()}"
    if end:
        return f"until {end.text()}"
    return "formerly" if not open_ else ""


def render_spans(spans: Sequence[tuple[When | None, When | None, bool]]) -> str:
    """"2015–2022; again since 2026": an edge's intervals in order, each (start, end, open)."""
    parts = [span_text(s, e, o) for s, e, o in spans]
    parts = [p for p in parts if p]
    return "; ".join(parts[:1] + [f"again {p}" if p != "formerly" else p for p in parts[1:]])
