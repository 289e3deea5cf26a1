"""Relative time phrases ("yesterday", "last Saturday", "two weekends ago", "next month") found
in text and resolved against the moment they were said into absolute date ranges. Pure.

dateparser (with a relative base) converts the phrases it knows: yesterday, today, tomorrow,
"N days/weeks/months/years ago", "in N ...", "last/next <weekday>". Small rules here cover what it
does not: weekends, "last/this/next week|month|year", "the month before last" and seasons. A
phrase resolves to an inclusive range of days: "next month" said on 8 May 2023 is 1-30 June 2023.
`absolutise` writes the ranges back into a text so pipelines/dates.py reads them as dates.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from engram.pipelines.dates import When, utc, when

_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2, "couple of": 2}
_NUM = r"(?:a\s+couple\s+of|couple\s+of|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d{1,3})"
_UNIT = r"(?:day|week|weekend|month|year)s?"
_WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_WEEKDAY = "(?:" + "|".join(_WEEKDAYS) + ")"
_SEASONS = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}  # first month (northern)
_PERIOD = r"(?:week|weekend|month|year|spring|summer|autumn|fall|winter)"
_PHRASE = re.compile(
    rf"\b(?:the\s+day\s+before\s+yesterday|the\s+day\s+after\s+tomorrow|yesterday|today|tonight|tomorrow"
    rf"|last\s+night|this\s+(?:morning|afternoon|evening)"
    rf"|{_NUM}\s+{_UNIT}\s+ago|in\s+{_NUM}\s+{_UNIT}"
    rf"|the\s+(?:week|weekend|month|year)\s+before\s+last|the\s+(?:week|weekend|month|year)\s+after\s+next"
    rf"|(?:last|next|this|past|coming)\s+(?:{_PERIOD}|{_WEEKDAY}))\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Resolved:
    """One relative phrase of a text and the days it means (both inclusive)."""

    phrase: str
    start: date
    end: date

    def when(self) -> When:
        """The range as one date at its precision: a day, a whole month or year, else its first day."""
        if self.start == self.end:
            return when(self.start.year, self.start.month, self.start.day)
        if self.start.day == 1 and self.end == _month_end(self.start):
            return when(self.start.year, self.start.month)
        if (self.start.month, self.start.day, self.end.month, self.end.day) == (1, 1, 12, 31):
            return when(self.start.year)
        return when(self.start.year, self.start.month, self.start.day)

    def as_dict(self) -> dict:
        return {"phrase": self.phrase, "start": self.start.isoformat(), "end": self.end.isoformat()}


def find_relative(text: str | None) -> list[tuple[tuple[int, int], str]]:
    """Every relative time phrase of the text with its span, in order."""
    return [(m.span(), m.group(0)) for m in _PHRASE.finditer(text or "")]


def resolve_all(text: str | None, base: datetime | None) -> list[Resolved]:
    """The text's relative phrases resolved against `base` (when they were said); none without one."""
    if base is None:
        return []
    found = (resolve(phrase, base) for _, phrase in find_relative(text))
    return [r for r in found if r is not None]


def dates_said(parts: dict[str, str | None], base: datetime) -> list[dict]:
    """Each part's ({"question": ..., "answer": ...}) resolved phrases, tagged with the part."""
    return [dict(r.as_dict(), part=name) for name, text in parts.items() for r in resolve_all(text, base)]


def resolve(phrase: str, base: datetime) -> Resolved | None:
    """The days one phrase means when said at `base`; None when it cannot be placed."""
    words = " ".join(phrase.lower().split())
    day = utc(base).date()
    span = _by_rule(words, day) or _by_dateparser(words, utc(base).replace(tzinfo=None))
    return None if span is None else Resolved(phrase, *span)


def absolutise(text: str, resolved: Iterable[dict | Resolved]) -> str:
    """The text with each resolved phrase replaced by its absolute date ("7 May 2023")."""
    for r in resolved:
        r = r if isinstance(r, Resolved) else Resolved(r["phrase"], date.fromisoformat(r["start"]),
                                                       date.fromisoformat(r["end"]))
        text = re.sub(rf"\b{re.escape(r.phrase)}\b", r.when().text(), text, flags=re.IGNORECASE)
    return text


# ------------------------------------------------------------------ the rules dateparser lacks


def _by_rule(words: str, day: date) -> tuple[date, date] | None:
    m = re.fullmatch(rf"({_NUM}) weekends? ago", words)
    if m:
        return _weekend(day, -_number(m.group(1)))
    m = re.fullmatch(r"the (week|weekend|month|year) (before last|after next)", words)
    if m:
        return _period(m.group(1), day, -2 if m.group(2) == "before last" else 2)
    m = re.fullmatch(rf"(last|next|this|past|coming) ({_PERIOD})", words)
    if m:
        step = {"last": -1, "past": -1, "next": 1, "coming": 1, "this": 0}[m.group(1)]
        if m.group(1) == "coming" and m.group(2) == "weekend":
            step = 0  # "the coming weekend" is this one
        return _period(m.group(2), day, step)
    m = re.fullmatch(rf"in ({_NUM}) weekends?", words)
    if m:
        return _weekend(day, _number(m.group(1)))
    return None


def _period(unit: str, day: date, step: int) -> tuple[date, date]:
    if unit == "weekend":
        return _weekend(day, step)
    if unit == "week":
        monday = day - timedelta(days=day.weekday()) + timedelta(weeks=step)
        return monday, monday + timedelta(days=6)
    if unit == "month":
        first = _add_months(day.replace(day=1), step)
        return first, _month_end(first)
    if unit == "year":
        return date(day.year + step, 1, 1), date(day.year + step, 12, 31)
    return _season(unit, day, step)


def _weekend(day: date, step: int) -> tuple[date, date]:
    """Weekend `step` from the base: -1 the last one that ended before it, 0 this (or the
    coming) one, 1 the one after."""
    coming = day + timedelta(days=(5 - day.weekday()) % 7)  # this Saturday (today on a Saturday)
    if day.weekday() == 6:
        coming = day - timedelta(days=1)
    saturday = coming + timedelta(weeks=step)
    return saturday, saturday + timedelta(days=1)


def _season(name: str, day: date, step: int) -> tuple[date, date]:
    first_month = _SEASONS[name]
    # The season's occurrence containing or following the base day, then step from it.
    start = date(day.year - (1 if first_month == 12 and day.month <= 2 else 0), first_month, 1)
    if _add_months(start, 3) <= day:
        start = date(start.year + 1, first_month, 1)
    containing = start <= day
    if step < 0:
        start = date(start.year + step, first_month, 1)
    elif step > 0:
        start = date(start.year + step - (0 if containing else 1), first_month, 1)
    return start, _add_months(start, 3) - timedelta(days=1)


def _by_dateparser(words: str, base: datetime) -> tuple[date, date] | None:
    import dateparser  # imported here: loading its language data costs a second

    m = re.fullmatch(rf"(in )?({_NUM}) (day|week|month|year)s?( ago)?", words)
    unit = m.group(3) if m else "day"
    if m:
        words = f"{m.group(1) or ''}{_number(m.group(2))} {unit}s{m.group(4) or ''}"
    future = words.startswith(("next", "in ", "tomorrow", "the day after", "this"))
    if words == "last night":
        words = "yesterday"
    settings = {"RELATIVE_BASE": base, "PREFER_DATES_FROM": "future" if future else "past",
                "RETURN_AS_TIMEZONE_AWARE": False}
    found = dateparser.parse(words, languages=["en"], settings=settings)
    if found is None:
        return None
    day = found.date()
    if unit == "week":
        return _period("week", day, 0)
    if unit in ("month", "year"):
        return _period(unit, day, 0)
    return day, day


def _number(word: str) -> int:
    word = " ".join(word.split())
    return int(word) if word.isdigit() else _NUMBERS[word]


def _add_months(day: date, months: int) -> date:
    y, m = divmod(day.month - 1 + months, 12)
    return day.replace(year=day.year + y, month=m + 1)


def _month_end(day: date) -> date:
    return _add_months(day.replace(day=1), 1) - timedelta(days=1)
