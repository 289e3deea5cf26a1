"""Export and import one dataset's memory: the file format, its checks and the two use cases.

A jsonl export is a header line, then one record a line, `{"table": ..., "row": {...}}`, in
`TABLES` order (parents before children, so an import inserts in file order). Rows keep their
ids, vectors and provenance; values are JSON (uuids and timestamps as strings, vectors as lists).
The header names the format version, the dataset, the embedding model and dimension the
vectors came from, and the row count of every table: an import into a deployment with the same
model and dimension reuses the vectors, any other re-embeds the texts they came from
(`embedding_text`). A file of a newer format version is refused before anything is written.

GraphML is an export only: the graph (entities, the chunks edges touch, edges with their
intervals and provenance) for graph tools.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Callable
from xml.sax.saxutils import escape, quoteattr

from engram.pipelines.cognify.embedding import normalise
from engram.pipelines.cognify.windows import spans
from engram.pipelines.errors import BadInput

FORMAT = "engram-export"
VERSION = 1
FORMATS = ("jsonl", "graphml")

# Every table holding a dataset's memory, parents first (the order rows are written and read).
# Not exported: improve claims and fences (leases of running work) and the content-addressed
# embedding cache (embedding_vectors/refs/requests, shared by every dataset of a deployment).
TABLES = (
    "users", "datasets", "dataset_grants", "data_items", "documents", "chunks", "chunk_terms", "chunk_windows",
    "entity_types", "entities", "edges", "edge_intervals", "summaries", "triplet_embeddings",
    "session_entries", "session_improve_state", "dataset_improve_state",
    "lessons", "lesson_decisions", "user_preferences", "truth_bases", "truth_centroids",
    "capture_objects", "capture_requests",
    "skills", "agent_tools", "skill_runs", "skill_proposals", "agent_traces",
    "pipeline_runs", "stage_runs",
)

# The schema's other tables: leases of running work, the schema's own record.
NOT_EXPORTED = frozenset({"improve_claims", "improve_fences", "engram_meta"})

# The vector column of each table that has one.
VECTORS = {"chunks": "embedding", "chunk_windows": "embedding", "entity_types": "embedding",
           "entities": "embedding", "edges": "embedding", "summaries": "embedding",
           "triplet_embeddings": "embedding", "lessons": "embedding"}

PAGE_MAX = 5000  # records in one page of the public export task


class ExportFormatError(BadInput):
    """The file is not an Engram export this version can read; nothing was written."""


def header(*, dataset: Mapping[str, Any], owner: str, model: str, dimension: int, counts: Mapping[str, int],
           exported_at: str) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "dataset": dict(dataset), "owner": owner,
            "embedding": {"model": model, "dimension": dimension}, "counts": dict(counts),
            "exported_at": exported_at}


def check_header(obj: Any) -> dict[str, Any]:
    """The header, or a clear error: not an export, a newer version, missing fields."""
    if not isinstance(obj, dict) or obj.get("format") != FORMAT:
        raise ExportFormatError(f"not an Engram export: the first line must be the {FORMAT} header "
                                "(graphml files are for graph tools and cannot be imported)")
    version = obj.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ExportFormatError(f"export header: version must be a positive integer, got {version!r}")
    if version > VERSION:
        raise ExportFormatError(f"this export is format version {version}, written by a newer Engram; this "
                                f"Engram reads versions up to {VERSION} (fix: upgrade Engram, then import)")
    embedding = obj.get("embedding")
    if not isinstance(embedding, dict) or not isinstance(embedding.get("model"), str) \
            or not isinstance(embedding.get("dimension"), int):
        raise ExportFormatError("export header: embedding must give the model and the dimension of the vectors")
    dataset = obj.get("dataset")
    if not isinstance(dataset, dict) or not dataset.get("id") or not dataset.get("name"):
        raise ExportFormatError("export header: dataset must give its id and name")
    counts = obj.get("counts")
    if not isinstance(counts, dict) or set(counts) - set(TABLES) or \
            not all(isinstance(n, int) and n >= 0 for n in counts.values()):
        raise ExportFormatError(f"export header: counts must map tables among {', '.join(TABLES)} to row counts")
    return obj


def check_record(obj: Any, where: str) -> tuple[str, dict[str, Any]]:
    if not isinstance(obj, dict) or set(obj) != {"table", "row"}:
        raise ExportFormatError(f"{where}: a record is {{\"table\": ..., \"row\": {{...}}}}")
    table, row = obj["table"], obj["row"]
    if table not in TABLES or table == "datasets":
        raise ExportFormatError(f"{where}: unknown table {table!r}")
    if not isinstance(row, dict) or not row:
        raise ExportFormatError(f"{where}: the row of a {table} record must be a non-empty object")
    return table, row


def parse_objects(objs: Iterable[tuple[str, Any]]) -> tuple[dict[str, Any], Iterator[tuple[str, dict[str, Any]]]]:
    """The checked header and the records (checked as they are read, in table order) of
    (where, decoded object) pairs: the first object is the header."""
    it = iter(objs)
    first = next(it, None)
    if first is None:
        raise ExportFormatError("empty file: an export starts with its header line")
    head = check_header(first[1])

    def records() -> Iterator[tuple[str, dict[str, Any]]]:
        position = 0
        for where, obj in it:
            table, row = check_record(obj, where)
            index = TABLES.index(table)
            if index < position:
                raise ExportFormatError(f"{where}: a {table} record after {TABLES[position]} records "
                                        "(records come in table order)")
            position = index
            yield table, row

    return head, records()


def decoded_lines(lines: Iterable[str]) -> Iterator[tuple[str, Any]]:
    """(where, object) of each non-blank jsonl line."""
    first = True
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError as exc:
            if first:
                check_header(None)  # names what an export starts with (a GraphML file, say)
            raise ExportFormatError(f"line {number}: not JSON ({exc})") from None
        first = False
        yield f"line {number}", obj


def parse_jsonl(lines: Iterable[str]) -> tuple[dict[str, Any], Iterator[tuple[str, dict[str, Any]]]]:
    return parse_objects(decoded_lines(lines))


def record_line(table: str, row: Mapping[str, Any]) -> str:
    return json.dumps({"table": table, "row": row}, ensure_ascii=False, separators=(",", ":"))


def header_line(head: Mapping[str, Any]) -> str:
    return json.dumps(head, ensure_ascii=False, separators=(",", ":"))


def embedding_text(table: str, row: Mapping[str, Any], chunk_texts: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The text a row's vector is made from (the load's rule, pipelines/cognify/embedding.py)."""
    if table == "chunks":
        return row["text"]
    if table == "chunk_windows":
        chunk = chunk_texts.get(str(row["chunk_id"]))
        found = [t for w, s, t in spans(chunk) if (w, s) == (row["width"], row["start"])] if chunk else []
        return found[0] if found else None
    if table in ("summaries", "triplet_embeddings"):
        return row["text"]
    if table == "entities":
        return row.get("display_name") or row["name"]
    if table == "entity_types":
        return row["name"]
    if table == "edges":
        return row["edge_text"]
    if table == "lessons":
        return row["statement"]
    return None


@dataclass
class Reembedding:
    """Rows whose vectors are made again with this deployment's embedder (another model)."""
    embed: Callable[[list[str]], list[list[float]]]
    batch: int = 256
    chunks: dict[str, dict[str, Any]] = field(default_factory=dict)
    made: int = 0

    def rows(self, table: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if table == "chunks":
            self.chunks.update({str(r["id"]): {"text": r["text"], "conversation": r.get("conversation")}
                                for r in rows})
        column = VECTORS.get(table)
        if column is None:
            return rows
        todo = [(r, embedding_text(table, r, self.chunks)) for r in rows if r.get(column) is not None]
        for start in range(0, len(todo), self.batch):
            part = todo[start:start + self.batch]
            vectors = self.embed([normalise(t or "") for _, t in part])
            for (row, _), vector in zip(part, vectors):
                row[column] = vector
            self.made += len(part)
        return rows


@dataclass
class ImportResult:
    dataset: str
    dataset_id: str
    counts: dict[str, int]
    vectors: str  # reused | re-embedded
    reembedded: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"status": "imported", "dataset": self.dataset, "dataset_id": self.dataset_id,
                "counts": self.counts, "vectors": self.vectors, "reembedded": self.reembedded}


def export_file(store: Any, dataset: str, user: str, *, fmt: str = "jsonl", model: str, dimension: int,
                now: str, page: int = 1000) -> Iterator[str]:
    """The lines of `dataset`'s export (read grant) in `fmt`, read in one transaction."""
    if fmt not in FORMATS:
        raise BadInput(f"unknown export format {fmt!r}; expected one of {', '.join(FORMATS)}")
    with store.unit_of_work() as uow:
        dataset_id = uow.access.authorise(dataset, user, "read")
        head = uow.export.header(dataset_id, model=model, dimension=dimension, now=now)

        def records() -> Iterator[tuple[str, dict[str, Any]]]:
            cursor = None
            while True:
                part, cursor = uow.export.page(dataset_id, cursor, page)
                yield from part
                if cursor is None:
                    return

        if fmt == "graphml":
            yield from graphml(head, records())
            return
        yield header_line(head)
        for table, row in records():
            yield record_line(table, row)


def import_records(store: Any, objs: Iterable[tuple[str, Any]], *, user: str, name: str | None, model: str,
                 dimension: int, embed: Callable[[], Callable[[list[str]], list[list[float]]]],
                 batch: int = 500) -> ImportResult:
    """Restore an export as `user`'s dataset `name` (default: its exported name) in one transaction:
    a bad record, a newer version or a clash with what this deployment holds writes nothing."""
    head, records = parse_objects(objs)
    same = head["embedding"]["model"] == model and head["embedding"]["dimension"] == dimension
    again = None if same else Reembedding(embed())
    target = name or head["dataset"]["name"]
    counts: dict[str, int] = {}
    with store.unit_of_work() as uow:
        dataset_id = uow.export.restore_dataset(head, user=user, name=target)
        table, rows = None, []

        def flush() -> None:
            if rows:
                out = again.rows(table, rows) if again else rows
                counts[table] = counts.get(table, 0) + uow.export.insert(table, out, head)
                rows.clear()

        for t, row in records:
            if t != table or len(rows) >= batch:
                flush()
                table = t
            rows.append(row)
        flush()
        uow.export.finish(dataset_id)
        counts["datasets"] = 1
        expected = {t: n for t, n in head["counts"].items() if n}
        got = {t: n for t, n in counts.items() if n}
        if got != expected:
            diff = {t: (expected.get(t, 0), got.get(t, 0)) for t in set(expected) | set(got)
                    if expected.get(t, 0) != got.get(t, 0)}
            raise ExportFormatError(f"the file's records do not match its header's counts (table: header, "
                                    f"records): {diff}; the file is truncated or edited")
    return ImportResult(target, str(dataset_id), {t: counts.get(t, 0) for t in TABLES},
                        "reused" if same else "re-embedded", again.made if again else 0)


# ------------------------------------------------------------------ graphml

_KEYS = (  # (id, for, name, type)
    ("kind", "node", "kind", "string"), ("name", "node", "name", "string"), ("type", "node", "type", "string"),
    ("description", "node", "description", "string"), ("text", "node", "text", "string"),
    ("relationship", "edge", "relationship", "string"), ("edge_text", "edge", "edge_text", "string"),
    ("valid_from", "edge", "valid_from", "string"), ("valid_to", "edge", "valid_to", "string"),
    ("superseded", "edge", "superseded", "boolean"), ("provenance", "edge", "provenance", "string"),
    ("intervals", "edge", "intervals", "string"),
)


def _data(key: str, value: Any) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        value = "true" if value else "false"
    return f'<data key="{key}">{escape(str(value))}</data>'


def graphml(head: Mapping[str, Any], records: Iterable[tuple[str, Mapping[str, Any]]]) -> Iterator[str]:
    """GraphML of the dataset's graph: entity nodes, the chunk nodes edges touch, edges with
    their relationship, text, validity, provenance (chunk ids) and statements (intervals, JSON)."""
    types: dict[str, str] = {}
    chunks: dict[str, Mapping[str, Any]] = {}
    nodes: set[str] = set()
    edges: list[Mapping[str, Any]] = []
    intervals: dict[str, list[dict[str, Any]]] = {}
    yield '<?xml version="1.0" encoding="UTF-8"?>'
    yield '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">'
    for key, target, name, kind in _KEYS:
        yield f'  <key id="{key}" for="{target}" attr.name="{name}" attr.type="{kind}"/>'
    yield f'  <graph id={quoteattr(str(head["dataset"]["name"]))} edgedefault="directed">'
    for table, row in records:
        if table == "entity_types":
            types[str(row["id"])] = row["name"]
        elif table == "chunks":
            chunks[str(row["id"])] = row
        elif table == "entities":
            nodes.add(str(row["id"]))
            yield (f'    <node id={quoteattr(str(row["id"]))}>{_data("kind", "entity")}'
                   f'{_data("name", row.get("display_name") or row["name"])}'
                   f'{_data("type", types.get(str(row.get("type_id"))))}{_data("description", row.get("description"))}'
                   '</node>')
        elif table == "edges":
            edges.append(row)
        elif table == "edge_intervals":
            intervals.setdefault(str(row["edge_id"]), []).append(
                {k: row.get(k) for k in ("chunk_id", "valid_from", "valid_to", "ended", "starts_at", "ends_at")})
    for row in edges:  # a chunk is a node when an edge touches it (a chunk `contains` its entities)
        for end in (str(row["source_id"]), str(row["target_id"])):
            if end not in nodes:
                nodes.add(end)
                chunk = chunks.get(end)
                yield (f'    <node id={quoteattr(end)}>{_data("kind", "chunk" if chunk else "node")}'
                       f'{_data("text", chunk["text"] if chunk else None)}</node>')
    for row in edges:
        yield (f'    <edge id={quoteattr(str(row["id"]))} source={quoteattr(str(row["source_id"]))} '
               f'target={quoteattr(str(row["target_id"]))}>{_data("relationship", row["relationship"])}'
               f'{_data("edge_text", row.get("edge_text"))}{_data("valid_from", row.get("valid_from"))}'
               f'{_data("valid_to", row.get("valid_to"))}{_data("superseded", bool(row.get("superseded")))}'
               f'{_data("provenance", " ".join(str(p) for p in row.get("provenance") or []))}'
               f'{_data("intervals", json.dumps(intervals[str(row["id"])]) if str(row["id"]) in intervals else None)}'
               '</edge>')
    yield "  </graph>"
    yield "</graphml>"
