"""The one date rule (pipelines/dates.py): what extraction, supersession and recall read as time."""

from datetime import UTC, datetime

import pytest

from engram.pipelines.dates import (
    aspect_words,
    find_dates,
    parse_when,
    query_window,
    render_spans,
    sentences_naming,
    stated_interval,
    when,
)


def test_dates_keep_their_precision_and_order_by_start():
    assert [w.iso() for _, w in find_dates("in 2015, March 2016, 3 March 2017, March 4th, 2018, 2019-05-06")] == [
        "2015", "2016-03", "2017-03-03", "2018-03-04", "2019-05-06"]
    assert when(2024) < when(2024, 3) < when(2024, 3, 10) < when(2024, 4)
    assert when(2024, 3).text() == "March 2024" and when(2024, 3, 10).text() == "10 March 2024"
    assert when(2022).end == datetime(2023, 1, 1, tzinfo=UTC)


def test_years_before_1900_are_years_and_counts_are_not():
    assert [w.iso() for _, w in find_dates("The mill opened in 1850 and closed in 1066.")] == ["1850", "1066"]
    assert find_dates("Acme has 1200 employees, order 120245, $2015 and 20201.") == []


@pytest.mark.parametrize("value, iso", [("2015", "2015"), ("2015-03", "2015-03"), ("2015-03-04", "2015-03-04"),
                                        ("2015-03-04T10:00:00Z", "2015-03-04"), ("March 2015", "2015-03"),
                                        ("unknown", None), ("", None), (None, None), ("2015-13", None),
                                        ("2150", None), ("0800-01", None)])  # the one year rule: 1000-2099
def test_parse_when(value, iso):
    parsed = parse_when(value)
    assert (parsed.iso() if parsed else None) == iso


@pytest.mark.parametrize("text, start, end, ended", [
    ("Maria Lopez was elected mayor of Springfield in 2015.", "2015", None, False),
    ("Tom Reed became mayor of Springfield in 2022.", "2022", None, False),
    ("Maria Lopez was re-elected mayor of Springfield in 2026.", "2026", None, False),
    ("Maria Lopez was mayor of Springfield from 2015 to 2022.", "2015", "2022", True),
    ("Alice has been CEO of Acme since March 2015.", "2015-03", None, False),
    ("Bob was CEO of Acme until 2019.", None, "2019", True),
    ("Alice Smith is the former CEO of Acme.", None, None, True),
    ("Alice Smith was the CEO of Acme.", None, None, True),
    ("Acme was founded on March 3rd, 2021.", "2021-03-03", None, False),  # passive event, not over
    ("Lincoln was president from 1861 to 1865.", "1861", "1865", True),
    ("She served 2015\u20132022.", "2015", "2022", True),
    ("Springfield's mayor was Maria Lopez (elected 2015).", "2015", None, False),
    ("Alice is CEO of Acme.", None, None, False),
])
def test_stated_interval(text, start, end, ended):
    stated = stated_interval(text)
    assert (stated.valid_from.iso() if stated.valid_from else None) == start
    assert (stated.valid_to.iso() if stated.valid_to else None) == end
    assert stated.ended is ended


def test_assertion_time_is_the_latest_date_named():
    assert stated_interval("Maria was mayor from 2015 to 2022.").asserted.iso() == "2022"


def test_aspect_words_are_time_not_relationship():
    assert aspect_words(["became", "mayor", "of"]) == (["mayor", "of"], True, False)
    assert aspect_words(["then", "CEO", "of"]) == (["CEO", "of"], False, True)  # "X, then CEO of Y"
    assert aspect_words(["then", "became", "CEO", "of"]) == (["CEO", "of"], True, False)
    assert aspect_words(["re-elected", "mayor", "of"]) == (["mayor", "of"], True, False)
    assert aspect_words(["took", "over", "mayor", "of"]) == (["mayor", "of"], True, False)
    assert aspect_words(["former", "ceo", "of"]) == (["ceo", "of"], False, True)
    assert aspect_words(["served", "as", "mayor", "of"]) == (["mayor", "of"], False, True)
    assert aspect_words(["served", "as", "first", "CEO", "of"]) == (["CEO", "of"], False, True)
    assert aspect_words(["first", "dean", "of"]) == (["first", "dean", "of"], False, False)
    assert aspect_words(["founded"]) == (["founded"], False, False)
    assert aspect_words(["became"]) == (["became"], False, False)  # nothing else left: keep it


def test_sentences_naming_both_ends():
    chunk = "Acme was founded in 1999. Alice is CEO of Acme since 2020. The 2023 report is out."
    assert sentences_naming([chunk], ["Alice", "acme"]) == ["Alice is CEO of Acme since 2020."]


@pytest.mark.parametrize("question, first, last", [
    ("who was mayor in 2018", "2018", "2018"),
    ("between 2020 and 2010", "2010", "2020"),
    ("from March 2015 to 2016", "2015-03", "2016"),
    ("since 2000", "2000", "9999"),
    ("what happened before 1850", "0001", "1849-12-31"),
    ("after 2000", "2001-01-01", "9999"),
    ("until 2019", "0001", "2019"),
    ("in 2001 and 2005 and 2003", "2001", "2005"),
])
def test_query_window_reads_the_same_phrases(question, first, last):
    a, b = query_window(question)
    assert (a.iso(), b.iso()) == (first, last)
    assert query_window("who is the mayor now") is None


def test_render_spans():
    assert render_spans([(when(2015), when(2022), False), (when(2026), None, True)]) == "2015\u20132022; again since 2026"
    assert render_spans([(when(2015, 3), None, True)]) == "since March 2015"
    assert render_spans([(None, None, False)]) == "formerly"
    assert render_spans([(None, None, True)]) == ""


def test_then_before_a_post_means_it_was_held_at_that_time():
    assert stated_interval("Alice Moreau, then CEO of Harbor Dynamics, decided to buy the company.").ended
    assert not stated_interval("She sold the boat, then moved to Lima.").ended
    assert not stated_interval("Alice Moreau is the CEO of Harbor Dynamics.").ended
