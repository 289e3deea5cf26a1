"""Relative time phrases resolved against when they were said (pipelines/relative_dates.py)."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from engram.pipelines.dates import stated_interval, when
from engram.pipelines.relative_dates import absolutise, dates_said, find_relative, resolve, resolve_all

# Monday 8 May 2023, 1:56 pm: the session's time.
BASE = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)

TABLE = [
    ("yesterday", "2023-05-07", "2023-05-07"),
    ("today", "2023-05-08", "2023-05-08"),
    ("tomorrow", "2023-05-09", "2023-05-09"),
    ("last night", "2023-05-07", "2023-05-07"),
    ("the day before yesterday", "2023-05-06", "2023-05-06"),
    ("two days ago", "2023-05-06", "2023-05-06"),
    ("a couple of days ago", "2023-05-06", "2023-05-06"),
    ("last Saturday", "2023-05-06", "2023-05-06"),
    ("last Friday", "2023-05-05", "2023-05-05"),
    ("next Friday", "2023-05-12", "2023-05-12"),
    ("last weekend", "2023-05-06", "2023-05-07"),
    ("two weekends ago", "2023-04-29", "2023-04-30"),
    ("this weekend", "2023-05-13", "2023-05-14"),
    ("next weekend", "2023-05-20", "2023-05-21"),
    ("last week", "2023-05-01", "2023-05-07"),
    ("a week ago", "2023-05-01", "2023-05-07"),
    ("three weeks ago", "2023-04-17", "2023-04-23"),
    ("in two weeks", "2023-05-22", "2023-05-28"),
    ("next month", "2023-06-01", "2023-06-30"),
    ("last month", "2023-04-01", "2023-04-30"),
    ("2 months ago", "2023-03-01", "2023-03-31"),
    ("the month before last", "2023-03-01", "2023-03-31"),
    ("last year", "2022-01-01", "2022-12-31"),
    ("next year", "2024-01-01", "2024-12-31"),
    ("three years ago", "2020-01-01", "2020-12-31"),
    ("last summer", "2022-06-01", "2022-08-31"),
    ("this summer", "2023-06-01", "2023-08-31"),
    ("last winter", "2022-12-01", "2023-02-28"),
]


@pytest.mark.parametrize(("phrase", "start", "end"), TABLE)
def test_a_phrase_resolves_to_the_days_it_means_when_said(phrase: str, start: str, end: str) -> None:
    resolved = resolve(phrase, BASE)
    assert resolved is not None
    assert (resolved.start, resolved.end) == (date.fromisoformat(start), date.fromisoformat(end))


def test_the_same_phrase_said_on_another_day_means_other_days() -> None:
    saturday = datetime(2023, 5, 6, 10, tzinfo=UTC)
    assert resolve("last Saturday", saturday).start == date(2023, 4, 29)  # not that same day
    assert (resolve("last weekend", saturday).start, resolve("this weekend", saturday).start) == (
        date(2023, 4, 29), date(2023, 5, 6))
    sunday = datetime(2023, 5, 7, 10, tzinfo=UTC)
    assert resolve("last weekend", sunday).start == date(2023, 4, 29)


def test_phrases_are_found_in_running_text_and_nothing_else_is() -> None:
    text = ("I went to the support group yesterday, and Last Saturday we painted. Two weekends ago we "
            "raced; next month I start. In 2019 I moved; the week was long.")
    assert [p for _, p in find_relative(text)] == ["yesterday", "Last Saturday", "Two weekends ago", "next month"]
    assert find_relative("the weekday schedule, a yearly plan, the lasting summers") == []


def test_without_a_base_nothing_is_resolved() -> None:
    assert resolve_all("I went there yesterday", None) == []


def test_absolute_dates_read_as_dates_by_the_one_date_rule() -> None:
    text = "Caroline went to the support group yesterday"
    written = absolutise(text, resolve_all(text, BASE))
    assert written == "Caroline went to the support group 7 May 2023"
    assert stated_interval(written).valid_from == when(2023, 5, 7)
    assert stated_interval(absolutise("moving next month", resolve_all("moving next month", BASE))).valid_from == (
        when(2023, 6))


def test_a_session_turns_question_and_answer_are_resolved_separately() -> None:
    found = dates_said({"question": "What did I do yesterday?", "answer": "You ran last Saturday."}, BASE)
    assert found == [
        {"phrase": "yesterday", "start": "2023-05-07", "end": "2023-05-07", "part": "question"},
        {"phrase": "last Saturday", "start": "2023-05-06", "end": "2023-05-06", "part": "answer"},
    ]
