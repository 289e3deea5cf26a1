from datetime import UTC, datetime

from engram.pipelines.maintenance.dates import assertion_date, assertion_year, latest_year


def test_latest_year_in_text():
    assert latest_year("CEO from 2015 until 2020.") == 2020
    assert latest_year("no date here") is None
    assert latest_year(None) is None
    # Only standalone 4-digit years in 1900-2099: not part of longer numbers, not 1800s.
    assert latest_year("order 120245, 1850 and 20201") is None


def test_description_wins_over_chunk_text():
    assert assertion_year("appointed in 2019", ["Alice is CEO of Acme (2024)."], ["Alice", "Acme"]) == 2019


def test_sentence_naming_both_endpoints_wins_over_other_sentences():
    chunk = "Acme was founded in 1999. Alice is CEO of Acme since 2020. The 2023 report is out."
    assert assertion_year(None, [chunk], ["Alice", "Acme"]) == 2020


def test_falls_back_to_latest_year_in_source_chunks():
    chunks = ["Alice leads the company. Reported in 2021.", "Minutes of 2022."]
    assert assertion_year(None, chunks, ["Alice", "Acme"]) == 2022


def test_entity_names_match_case_and_underscores_loosely():
    assert assertion_year("", ["In 2018, HARBOR DYNAMICS hired alice. 2024 plans."], ["harbor_dynamics", "Alice"]) == 2018


def test_no_year_anywhere_gives_no_date():
    assert assertion_date("leads", ["Alice is CEO of Acme."], ["Alice", "Acme"]) is None


def test_date_is_first_of_january_utc():
    assert assertion_date(None, ["Bob is CEO of Acme (2024)."], ["Bob", "Acme"]) == datetime(2024, 1, 1, tzinfo=UTC)
