"""Classify stage: document types, text extraction, and clear refusals of unusable content."""

from __future__ import annotations

import io

import pytest
from pypdf import PdfWriter

from engram.pipelines.cognify.classify import classify, extract_text, validate_content
from engram.pipelines.errors import BadInput

LIMIT = 1_000_000


def make_pdf(text: str) -> bytes:
    """A one-page PDF with real text, written by hand (pypdf cannot draw text)."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def blank_pdf() -> bytes:
    writer = PdfWriter()
    writer.add_blank_page(width=200, height=200)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("name", "mime", "expected"),
    [
        (None, "application/pdf", "pdf"),
        (None, "text/markdown", "markdown"),
        (None, "text/csv; charset=utf-8", "csv"),
        (None, "application/json", "json"),
        (None, "text/x-python", "code"),
        ("notes.md", None, "markdown"),
        ("notes.md", "text/plain", "markdown"),  # generic mime defers to the extension
        ("DATA.CSV", None, "csv"),
        ("main.py", None, "code"),
        ("readme.txt", None, "text"),
    ],
)
def test_classify_uses_mime_then_extension(name: str | None, mime: str | None, expected: str) -> None:
    assert classify(name, mime, b"plain words here") == expected


def test_pdf_magic_wins_over_a_wrong_label() -> None:
    assert classify("report.txt", "text/plain", make_pdf("Hello")) == "pdf"


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b'{"name": "Acme", "staff": 12}', "json"),
        (b"[1, 2, 3]", "json"),
        (b"name,role\nAlice,CEO\nBob,CTO\n", "csv"),
        (b"id\tscore\n1\t0.5\n2\t0.7\n", "csv"),
        (b"# Title\n\nSome text under a heading.", "markdown"),
        (b"#!/bin/sh\necho hi\n", "code"),
        (b"Alice met Bob, then Carol.\nThey talked, ate, and left.\n", "text"),
        (b"{not json at all", "text"),
    ],
)
def test_classify_sniffs_content_without_hints(data: bytes, expected: str) -> None:
    assert classify(None, None, data) == expected


def test_pdf_text_is_extracted() -> None:
    text = validate_content(make_pdf("Alice founded Acme in 1999."), "pdf", LIMIT)
    assert "Alice founded Acme in 1999." in text


def test_csv_rows_become_header_value_paragraphs() -> None:
    text = extract_text(b"name,role\nAlice,CEO\nBob,\n", "csv")
    assert text == "name: Alice\nrole: CEO\n\nname: Bob"


def test_json_is_flattened_to_path_value_lines() -> None:
    data = b'{"company": "Acme", "founded": 1999, "people": [{"name": "Alice"}], "tags": ["a", "b"]}'
    lines = extract_text(data, "json").splitlines()
    assert lines == ["company: Acme", "founded: 1999", "people[0].name: Alice", "tags: a, b"]


def test_json_list_of_records_gives_one_paragraph_per_record() -> None:
    text = extract_text(b'[{"name": "Alice"}, {"name": "Bob"}]', "json")
    assert text == "name: Alice\n\nname: Bob"


def test_text_is_returned_unchanged_and_bom_dropped() -> None:
    data = "\ufeffCafé au lait.\n\nSecond paragraph.".encode()
    assert validate_content(data, "text", LIMIT) == "Café au lait.\n\nSecond paragraph."


def test_bad_input_is_a_value_error() -> None:
    assert issubclass(BadInput, ValueError)


def test_empty_content_is_refused() -> None:
    with pytest.raises(BadInput, match="empty"):
        validate_content(b"", "text", LIMIT)


def test_whitespace_only_content_is_refused() -> None:
    with pytest.raises(BadInput, match="whitespace"):
        validate_content(b"  \n\t \r\n ", "text", LIMIT)


def test_oversized_content_names_size_and_limit() -> None:
    with pytest.raises(BadInput, match=r"2048 bytes.*limit of 1024 bytes"):
        validate_content(b"a" * 2048, "text", 1024)


def test_nul_byte_is_refused_with_its_offset() -> None:
    with pytest.raises(BadInput, match=r"NUL byte at offset 12"):
        validate_content(b"hello there \x00 and more words follow here", "text", LIMIT)


def test_invalid_utf8_names_the_byte_offset() -> None:
    with pytest.raises(BadInput, match=r"not valid UTF-8: byte 0xe9 at offset 3"):
        validate_content(b"caf\xe9 au lait", "text", LIMIT)


def test_binary_content_is_refused() -> None:
    data = bytes(range(256)) * 8
    with pytest.raises(BadInput, match="looks binary"):
        validate_content(data, "text", LIMIT)


def test_invalid_json_says_where() -> None:
    with pytest.raises(BadInput, match=r"JSON is invalid at line 2 column"):
        validate_content(b'{"a": 1,\n oops}', "json", LIMIT)


def test_declared_pdf_that_is_not_a_pdf_is_refused() -> None:
    with pytest.raises(BadInput, match="does not start with %PDF-"):
        validate_content(b"just some text", "pdf", LIMIT)


def test_broken_pdf_is_refused() -> None:
    with pytest.raises(BadInput, match="PDF could not be read"):
        validate_content(b"%PDF-1.4 truncated garbage", "pdf", LIMIT)


def test_pdf_without_text_is_refused() -> None:
    with pytest.raises(BadInput, match="no extractable text"):
        validate_content(blank_pdf(), "pdf", LIMIT)


def test_unknown_type_is_refused() -> None:
    with pytest.raises(BadInput, match="unknown document type"):
        validate_content(b"hello", "spreadsheet", LIMIT)
