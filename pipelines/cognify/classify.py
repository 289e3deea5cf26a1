"""Classify stage: decide a document's type and turn its bytes into plain text.

Pure: works only on the bytes it is given. Unusable content raises BadInput with a message a
producer can act on (the size and the limit, the byte offset of bad UTF-8, ...).
"""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

from engram.pipelines.cognify.conversation import looks_like_transcript
from engram.pipelines.errors import BadInput

DOC_TYPES = ("text", "markdown", "pdf", "csv", "json", "code", "conversation")

_PDF_MAGIC = b"%PDF-"

_MIME_TYPES: dict[str, str] = {
    "application/pdf": "pdf",
    "application/x-pdf": "pdf",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "text/csv": "csv",
    "application/csv": "csv",
    "text/tab-separated-values": "csv",
    "application/json": "json",
    "text/json": "json",
    "application/ld+json": "json",
    "text/x-python": "code",
    "application/x-python": "code",
    "application/javascript": "code",
    "text/javascript": "code",
    "application/typescript": "code",
    "application/x-sh": "code",
    "text/x-shellscript": "code",
    "application/sql": "code",
    "text/x-c": "code",
    "text/x-java": "code",
    "text/x-go": "code",
    "text/x-rust": "code",
    "text/html": "code",
    "application/xml": "code",
    "text/xml": "code",
}

_EXTENSIONS: dict[str, str] = {
    "txt": "text", "text": "text", "log": "text", "rst": "text",
    "md": "markdown", "markdown": "markdown", "mdx": "markdown",
    "pdf": "pdf",
    "csv": "csv", "tsv": "csv",
    "json": "json", "jsonld": "json",
    **{ext: "code" for ext in (
        "py", "pyi", "js", "jsx", "ts", "tsx", "java", "kt", "go", "rs", "c", "h", "cc", "cpp",
        "hpp", "cs", "rb", "php", "swift", "scala", "sh", "bash", "zsh", "sql", "r", "lua",
        "pl", "html", "htm", "css", "xml", "yaml", "yml", "toml", "ini",
    )},
}

# Bytes that never appear in real text; tab, LF, FF and CR are excluded on purpose.
_CONTROL_BYTES = frozenset(range(0x00, 0x09)) | frozenset((0x0B, 0x0E, 0x0F)) | frozenset(
    range(0x10, 0x20)
) | frozenset((0x7F,))
_BINARY_SAMPLE = 8192
_BINARY_RATIO = 0.10
_MARKDOWN_HINT = re.compile(r"^(#{1,6} \S|```|\* \S|- \[[ x]\] )", re.MULTILINE)
_TEXT_TYPES = frozenset(("text", "markdown", "csv", "json", "code", "conversation"))


def classify(name: str | None, mime: str | None, data: bytes) -> str:
    """Document type from mime, then file extension, then the content itself."""
    # Magic bytes are authoritative: a PDF mislabelled as text would decode to garbage.
    if data.startswith(_PDF_MAGIC):
        return "pdf"
    if mime:
        by_mime = _MIME_TYPES.get(mime.split(";")[0].strip().lower())
        if by_mime:
            return by_mime
    if name and "." in name:
        by_ext = _EXTENSIONS.get(name.rsplit(".", 1)[1].strip().lower())
        if by_ext:
            return _conversation_or(by_ext, data)
    return _sniff(data)


def _conversation_or(doc_type: str, data: bytes) -> str:
    """A text file of `Name: text` turns is a conversation."""
    if doc_type != "text":
        return doc_type
    try:
        return "conversation" if looks_like_transcript(data.decode("utf-8-sig")) else doc_type
    except UnicodeDecodeError:
        return doc_type


def _sniff(data: bytes) -> str:
    text = data[:_BINARY_SAMPLE * 8].decode("utf-8", errors="replace").lstrip("\ufeff").strip()
    if text[:1] in ("{", "["):
        try:
            json.loads(data.decode("utf-8-sig"))
            return "json"
        except (UnicodeDecodeError, ValueError):
            pass
    if text.startswith("#!"):
        return "code"
    if looks_like_transcript(text):
        return "conversation"
    if _looks_like_csv(text):
        return "csv"
    if _MARKDOWN_HINT.search(text):
        return "markdown"
    return "text"


def _looks_like_csv(text: str) -> bool:
    # Strict on purpose: prose with commas must not become a table.
    lines = [line for line in text.splitlines()[:20] if line.strip()]
    if len(lines) < 2:
        return False
    for delimiter in (",", "\t", ";"):
        try:
            widths = {len(row) for row in csv.reader(lines, delimiter=delimiter)}
        except csv.Error:
            continue
        if len(widths) == 1 and widths.pop() >= 2:
            return True
    return False


def extract_text(data: bytes, doc_type: str) -> str:
    """Plain text for chunking. Text types are decoded strictly as UTF-8."""
    if doc_type == "pdf":
        return _pdf_text(data)
    text = _decode(data)
    if doc_type == "csv":
        return _csv_text(text)
    if doc_type == "json":
        return _json_text(text)
    if doc_type in _TEXT_TYPES:
        return text
    raise BadInput(_unknown_type(doc_type))


def validate_content(data: bytes, doc_type: str, max_bytes: int) -> str:
    """Check the bytes are usable as doc_type and return the extracted text."""
    if len(data) == 0:
        raise BadInput("content is empty")
    if len(data) > max_bytes:
        raise BadInput(f"content is {len(data)} bytes, larger than the limit of {max_bytes} bytes")
    if doc_type == "pdf":
        if not data.startswith(_PDF_MAGIC):
            raise BadInput("content was declared as PDF but does not start with %PDF-")
        text = _pdf_text(data)
        if not text.strip():
            raise BadInput("PDF has no extractable text (is it a scanned image?)")
        return text
    if doc_type not in _TEXT_TYPES:
        raise BadInput(_unknown_type(doc_type))
    sample = data[:_BINARY_SAMPLE]
    controls = sum(1 for byte in sample if byte in _CONTROL_BYTES)
    if controls / len(sample) > _BINARY_RATIO:
        raise BadInput(
            f"content looks binary ({controls} control bytes in the first {len(sample)}); "
            f"only text, markdown, csv, json, code and PDF are accepted"
        )
    nul = data.find(b"\x00")
    if nul >= 0:
        raise BadInput(f"content contains a NUL byte at offset {nul}; not valid {doc_type}")
    text = extract_text(data, doc_type)
    if not text.strip():
        raise BadInput("content is whitespace only")
    return text


def _unknown_type(doc_type: str) -> str:
    return f"unknown document type {doc_type!r}; expected one of {', '.join(DOC_TYPES)}"


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")  # strict; -sig drops a leading BOM
    except UnicodeDecodeError as err:
        raise BadInput(
            f"content is not valid UTF-8: byte 0x{data[err.start]:02x} at offset {err.start} "
            f"({err.reason})"
        ) from None


def _pdf_text(data: bytes) -> str:
    from pypdf import PdfReader  # imported here: only PDFs pay for it
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise BadInput("PDF is encrypted with a password; cannot extract its text")
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
    except BadInput:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as err:
        raise BadInput(f"PDF could not be read: {err}") from None
    return "\n\n".join(page for page in pages if page)


def _csv_text(text: str) -> str:
    """One paragraph per row of "header: value" lines, so each row chunks as a unit."""
    sample = "\n".join(text.splitlines()[:20])
    try:
        dialect: Any = csv.Sniffer().sniff(sample, delimiters=",\t;|")
    except csv.Error:
        dialect = csv.excel
    try:
        rows = [r for r in csv.reader(io.StringIO(text), dialect) if any(c.strip() for c in r)]
    except csv.Error as err:
        raise BadInput(f"CSV could not be parsed: {err}") from None
    if not rows:
        return ""
    header = [h.strip() or f"column {i + 1}" for i, h in enumerate(rows[0])]
    if len(rows) == 1:
        return ", ".join(header)
    records = []
    for row in rows[1:]:
        lines = []
        for i, value in enumerate(row):
            key = header[i] if i < len(header) else f"column {i + 1}"
            if value.strip():
                lines.append(f"{key}: {value.strip()}")
        if lines:
            records.append("\n".join(lines))
    return "\n\n".join(records)


def _json_text(text: str) -> str:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise BadInput(
            f"JSON is invalid at line {err.lineno} column {err.colno}: {err.msg}"
        ) from None
    # A top-level list of records becomes one paragraph per record.
    if isinstance(value, list) and value and all(isinstance(v, (dict, list)) for v in value):
        return "\n\n".join("\n".join(_flatten(item, "")) for item in value)
    return "\n".join(_flatten(value, ""))


def _flatten(value: Any, path: str) -> list[str]:
    if isinstance(value, dict):
        lines = []
        for key, item in value.items():
            lines.extend(_flatten(item, f"{path}.{key}" if path else str(key)))
        return lines
    if isinstance(value, list):
        if all(not isinstance(v, (dict, list)) for v in value):
            rendered = ", ".join(_scalar(v) for v in value)
            return [f"{path}: {rendered}" if path else rendered]
        lines = []
        for i, item in enumerate(value):
            lines.extend(_flatten(item, f"{path}[{i}]"))
        return lines
    return [f"{path}: {_scalar(value)}" if path else _scalar(value)]


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
