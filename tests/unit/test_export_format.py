"""The export file format (pipelines/export.py): header checks, record checks, GraphML, re-embedding."""

from __future__ import annotations

import json
import uuid
import xml.etree.ElementTree as ET

import pytest

from engram.pipelines import export
from engram.pipelines.cognify.windows import turn_windows
from engram.pipelines.export import ExportFormatError, parse_jsonl

DATASET = {"id": str(uuid.uuid4()), "name": "kb", "owner_id": str(uuid.uuid4()), "settings": {}}


def _head(**kw) -> dict:
    head = export.header(dataset=DATASET, owner="ana", model="local:all-MiniLM-L6-v2", dimension=384,
                         counts={"datasets": 1, "chunks": 1}, exported_at="2026-12-05T00:00:00+00:00")
    head.update(kw)
    return head


def _lines(head: dict, *records) -> list[str]:
    return [json.dumps(head)] + [json.dumps(r) for r in records]


def test_a_header_of_this_version_and_its_records_parse():
    chunk = {"table": "chunks", "row": {"id": "c1", "text": "x"}}
    head, records = parse_jsonl(_lines(_head(), chunk) + ["  "])
    assert head["version"] == export.VERSION and list(records) == [("chunks", chunk["row"])]


def test_a_newer_version_is_refused_with_the_fix():
    with pytest.raises(ExportFormatError, match=r"format version 2, written by a newer Engram.*upgrade Engram"):
        parse_jsonl(_lines(_head(version=export.VERSION + 1)))


@pytest.mark.parametrize("first, message", [
    ("", "empty file"),
    ('{"table": "chunks", "row": {}}', "not an Engram export"),
    ("<?xml", "not an Engram export.*graphml files are for graph tools"),
    (json.dumps(_head(version="1")), "version must be a positive integer"),
    (json.dumps(_head(embedding={"model": "m"})), "embedding must give the model and the dimension"),
    (json.dumps(_head(counts={"secrets": 1})), "counts must map tables"),
])
def test_what_is_not_an_export_header_is_named(first, message):
    with pytest.raises(ExportFormatError, match=message):
        parse_jsonl([first])


@pytest.mark.parametrize("record, message", [
    ('{"table": "passwords", "row": {"id": 1}}', "line 2: unknown table 'passwords'"),
    ('{"table": "datasets", "row": {"id": 1}}', "unknown table 'datasets'"),
    ('{"table": "chunks", "row": []}', "must be a non-empty object"),
    ('{"table": "chunks"}', "a record is"),
    ('{"table": "chunks", "row": {"id": 1}', "line 2: not JSON"),
])
def test_a_malformed_record_is_named_by_its_line(record, message):
    _, records = parse_jsonl([json.dumps(_head()), record])
    with pytest.raises(ExportFormatError, match=message):
        list(records)


def test_records_out_of_table_order_are_refused():
    _, records = parse_jsonl(_lines(_head(), {"table": "edges", "row": {"id": 1}},
                                    {"table": "chunks", "row": {"id": 2}}))
    with pytest.raises(ExportFormatError, match="line 3: a chunks record after edges records"):
        list(records)


def test_every_table_of_the_schema_is_exported_or_named_as_not():
    from engram.models import tables

    assert all(hasattr(tables, t) for t in export.TABLES)
    assert set(export.VECTORS) <= set(export.TABLES)
    assert set(tables.metadata.tables) - set(export.TABLES) == export.NOT_EXPORTED


def test_graphml_is_well_formed_with_entities_chunks_and_edges_with_intervals():
    chunk, a, b = (str(uuid.uuid4()) for _ in range(3))
    records = [
        ("chunks", {"id": chunk, "text": "Ana leads <Harbor> & co."}),
        ("entity_types", {"id": "t1", "name": "person"}),
        ("entities", {"id": a, "name": "ana", "display_name": "Ana", "type_id": "t1", "description": ""}),
        ("entities", {"id": b, "name": "harbor", "display_name": "Harbor", "type_id": None, "description": "a firm"}),
        ("edges", {"id": "e1", "source_id": a, "target_id": b, "relationship": "ceo_of", "edge_text": "Ana ceo of Harbor",
                   "valid_from": "2024-01-01T00:00:00+00:00", "valid_to": None, "superseded": False,
                   "provenance": [chunk]}),
        ("edges", {"id": "e2", "source_id": chunk, "target_id": a, "relationship": "contains", "edge_text": "Ana",
                   "provenance": [chunk]}),
        ("edge_intervals", {"edge_id": "e1", "chunk_id": chunk, "valid_from": "2024-01-01T00:00:00+00:00",
                            "valid_to": None, "ended": False, "starts_at": None, "ends_at": None}),
    ]
    root = ET.fromstring("\n".join(export.graphml(_head(), records)))
    ns = {"g": "http://graphml.graphdrawing.org/xmlns"}
    nodes = {n.get("id"): {d.get("key"): d.text for d in n} for n in root.iterfind(".//g:node", ns)}
    edges = {e.get("id"): {d.get("key"): d.text for d in e} for e in root.iterfind(".//g:edge", ns)}
    assert nodes[a] == {"kind": "entity", "name": "Ana", "type": "person"}
    assert nodes[chunk] == {"kind": "chunk", "text": "Ana leads <Harbor> & co."}
    assert edges["e1"]["relationship"] == "ceo_of" and edges["e1"]["provenance"] == chunk
    assert json.loads(edges["e1"]["intervals"])[0]["valid_from"] == "2024-01-01T00:00:00+00:00"
    assert "intervals" not in edges["e2"]


def test_reembedding_uses_the_texts_the_load_embedded():
    chunk = {"id": uuid.uuid4(), "text": "A: hi\nB: hello\nA: bye", "conversation": {"turns": 3}}
    window = turn_windows(chunk)[1]
    seen: list[str] = []

    def embed(texts):
        seen.extend(texts)
        return [[float(len(t))] for t in texts]

    again = export.Reembedding(embed)
    again.rows("chunks", [{"id": str(chunk["id"]), "text": chunk["text"], "conversation": chunk["conversation"],
                           "embedding": [0.0]}])
    rows = again.rows("chunk_windows", [{"id": str(window.id), "chunk_id": str(chunk["id"]), "width": window.width,
                                         "start": window.start, "embedding": [0.0]}])
    again.rows("entities", [{"name": "ana", "display_name": "Ana  Lee", "embedding": [0.0]},
                            {"name": "bo", "display_name": "Bo", "embedding": None}])
    assert seen == ["A: hi B: hello A: bye", " ".join(window.text.split()), "Ana Lee"]
    assert rows[0]["embedding"] == [float(len(" ".join(window.text.split())))] and again.made == 3
