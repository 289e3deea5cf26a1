"""Forget: no copy of a forgotten item left anywhere in Postgres.

An item's text lives on in its chunks and summaries, in graph rows derived from it (entities,
edges, their descriptions and vectors), in its run's stage outputs and params, in session
entries whose answers cite it, and in the session documents those entries became. All of it
goes, in one transaction; the run stays as a tombstone with status `forgotten`. Other runs'
stage outputs and params drop their references to the forgotten ids (a capture's link output
naming the forgotten object, a pass's list of the edges it touched).
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, text

from engram.adapters.store.embeddings import forget_embeddings
from engram.adapters.store.search_sql import MENTIONS, kind_is
from engram.adapters.store.spans import refresh_spans
from engram.pipelines.facts import CONTAINS, CONTRADICTS, without_description
from engram.adapters.store.capture import CaptureRepository
from engram.adapters.store.runs import RunRepository

Counts = dict[str, int]
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_DROP = object()


def _names(value: Any, ids: set[str]) -> bool:
    return isinstance(value, str) and any(m.lower() in ids for m in _UUID.findall(value))


def drop_references(value: Any, ids: set[str]) -> Any:
    """`value` (a stage output, run params) without what names any of `ids` (lower-case): a list
    element naming one goes whole (an edge {source, target}, a proposal), as does a key whose
    string value names one."""
    out = _drop(value, ids)
    return None if out is _DROP else out


def _drop(value: Any, ids: set[str]) -> Any:
    if isinstance(value, dict):
        kept = {}
        for k, v in value.items():
            if _names(k, ids):
                continue
            out = _drop(v, ids)
            if out is not _DROP:
                kept[k] = out
        return kept
    if isinstance(value, list):
        return [_drop(v, ids) for v in value if not _references(v, ids)]
    if _names(value, ids):
        return _DROP
    return value


def _references(value: Any, ids: set[str]) -> bool:
    if isinstance(value, dict):
        return any(_names(k, ids) or _references(v, ids) for k, v in value.items())
    if isinstance(value, list):
        return any(_references(v, ids) for v in value)
    return _names(value, ids)


def _without(text_: str | None, ids: set[str]) -> str | None:
    """A run's error or reason with the forgotten ids replaced."""
    if text_ is None:
        return None
    return _UUID.sub(lambda m: "<forgotten>" if m.group(0).lower() in ids else m.group(0), text_)


def _uuids(values) -> list[uuid.UUID]:
    return [v if isinstance(v, uuid.UUID) else uuid.UUID(str(v)) for v in values]


class ForgetRepository:
    def __init__(self, conn: Connection):
        self.conn = conn
        # The texts forget removed (contents, chunks, summaries, entity names, session turns):
        # the caller purges copies outside Postgres that quote them (Celery task results).
        self.removed_texts: list[str] = []
        # The ids forget removed (items = captured objects, chunks, edges, entities, session
        # entries): other runs' outputs drop them, and the caller purges task results naming them.
        self.removed_ids: set[str] = set()
        self._datasets: set[uuid.UUID] = set()

    def _note(self, sql: str, **params) -> None:
        self.removed_texts.extend(t for row in self.conn.execute(text(sql), params) for t in row if t)

    def _ids(self, sql: str, **params) -> list[uuid.UUID]:
        return _uuids(self.conn.execute(text(sql), params).scalars())

    def forget_items(self, item_ids: Sequence[uuid.UUID]) -> tuple[Counts, list[tuple[uuid.UUID, str]]]:
        """Forget items and everything derived from them.

        Returns the counts and the surviving edges whose text lost the forgotten part: the
        caller re-embeds them (set_edge_embeddings) in the same transaction.
        """
        counts = {"items": 0, "chunks": 0, "edges": 0, "entities": 0, "session_entries": 0, "runs": 0}
        rewritten: dict[uuid.UUID, str] = {}
        pending = list(dict.fromkeys(item_ids))
        seen: set[uuid.UUID] = set()
        while pending:  # session entries citing the item became documents of their own: forget those too
            batch = [i for i in pending if i not in seen]
            seen.update(batch)
            if not batch:
                break
            derived = self._forget_batch(batch, counts, rewritten)
            pending = derived
        self._drop_references()
        return counts, sorted(rewritten.items())

    def _forget_batch(self, items: list[uuid.UUID], counts: Counts, rewritten: dict[uuid.UUID, str]) -> list[uuid.UUID]:
        p = {"items": items}
        # Serialise with stages of these runs: a stage finishing later sees `forgotten` and writes nothing.
        runs = self._ids("SELECT id FROM pipeline_runs WHERE data_item_id = ANY(CAST(:items AS uuid[])) FOR UPDATE", **p)
        chunk_ids = self._ids(
            "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id"
            " WHERE d.data_item_id = ANY(CAST(:items AS uuid[]))", **p)
        datasets = self._ids("SELECT DISTINCT dataset_id FROM data_items WHERE id = ANY(CAST(:items AS uuid[]))", **p)
        self._datasets.update(datasets)
        c = {"c": chunk_ids, "d": datasets}
        self._note("SELECT content FROM data_items WHERE id = ANY(CAST(:items AS uuid[]))", **p)
        self._note("SELECT c.text, s.text FROM chunks c LEFT JOIN summaries s ON s.chunk_id = c.id"
                   " WHERE c.id = ANY(CAST(:c AS uuid[]))", **c)

        # Captured objects: their nodes, every edge touching them, inferences drawn from them.
        captured_edges = CaptureRepository(self.conn).forget(items)
        counts["edges"] += len(captured_edges)
        self.removed_ids.update(str(e) for e in captured_edges)
        linked, removed, shrunk = self._forget_edges(chunk_ids, datasets, rewritten)
        counts["edges"] += len(removed)
        self.removed_ids.update(str(i) for i in [*items, *chunk_ids, *removed])
        counts["chunks"] += self.conn.execute(
            text("DELETE FROM chunks WHERE id = ANY(CAST(:c AS uuid[]))"), c).rowcount
        # Likewise an interval whose successor interval went with the item (rows cascade with chunks).
        self.conn.execute(text(
            "UPDATE edge_intervals i SET ends_at = i.valid_to, superseded_by = NULL WHERE i.superseded_by IS NOT NULL"
            " AND i.dataset_id = ANY(CAST(:d AS uuid[]))"
            " AND NOT EXISTS (SELECT 1 FROM edge_intervals n WHERE n.id = i.superseded_by)"), {"d": datasets})
        # And a statement the item closed ("resigned in 2017") is open again.
        refresh_spans(self.conn, set(shrunk) - set(removed))
        self._note("SELECT question, answer, context FROM session_entries WHERE source_chunk_ids && CAST(:c AS uuid[])"
                   " OR source_edge_ids && CAST(:r AS uuid[])", c=chunk_ids, r=removed)
        entries = self._ids(
            "DELETE FROM session_entries WHERE source_chunk_ids && CAST(:c AS uuid[])"
            " OR source_edge_ids && CAST(:r AS uuid[]) RETURNING id", c=chunk_ids, r=removed)
        counts["session_entries"] += len(entries)
        self.removed_ids.update(str(e) for e in entries)
        lesson_items = self._forget_learned(items, entries)
        forget_embeddings(self.conn, items)  # reuse vectors and pending texts no remaining item uses
        counts["items"] += self.conn.execute(
            text("DELETE FROM data_items WHERE id = ANY(CAST(:items AS uuid[]))"), p).rowcount
        counts["entities"] += self._forget_entities(datasets, linked)
        counts["runs"] += RunRepository(self.conn).tombstone(runs)
        if not entries:
            return lesson_items
        return lesson_items + self._ids("SELECT id FROM data_items WHERE source LIKE ANY(CAST(:s AS text[]))",
                                        s=[f"session:%#{e}" for e in entries])

    def _forget_edges(self, chunk_ids: list[uuid.UUID], datasets: list[uuid.UUID],
                      rewritten: dict[uuid.UUID, str]) -> tuple[list[uuid.UUID], list[uuid.UUID], list[uuid.UUID]]:
        """The forgotten chunks' edges: (entities they mentioned, edges removed, edges that cited them)."""
        c = {"c": chunk_ids, "d": datasets}
        linked = self._ids("SELECT DISTINCT target_id FROM edges WHERE source_id = ANY(CAST(:c AS uuid[]))"
                           f" AND {kind_is(CONTAINS, 'relationship')}", **c)
        removed = self._ids("DELETE FROM edges WHERE source_id = ANY(CAST(:c AS uuid[]))"
                            " OR target_id = ANY(CAST(:c AS uuid[])) RETURNING id", **c)
        shrunk = self._ids(
            "UPDATE edges SET provenance = ARRAY(SELECT unnest(provenance) EXCEPT SELECT unnest(CAST(:c AS uuid[])))"
            " WHERE provenance && CAST(:c AS uuid[]) RETURNING id", **c)
        # A conflict or a fact that cited the item in part: its text may quote the item.
        conflict = kind_is(CONTRADICTS, "relationship")
        removed += self._ids(f"DELETE FROM edges WHERE id = ANY(CAST(:s AS uuid[])) AND {conflict} RETURNING id", s=shrunk)
        removed += self._ids("DELETE FROM edges WHERE dataset_id = ANY(CAST(:d AS uuid[]))"
                             " AND cardinality(provenance) = 0 RETURNING id", **c)
        gone = [str(r) for r in removed]
        removed += self._ids(
            f"DELETE FROM edges WHERE dataset_id = ANY(CAST(:d AS uuid[])) AND {conflict}"
            " AND (properties->>'first_edge_id' = ANY(:g) OR properties->>'second_edge_id' = ANY(:g)) RETURNING id",
            d=datasets, g=gone)
        # A fact that lost to a forgotten one is current again.
        self.conn.execute(text(
            "UPDATE edges SET superseded = false, superseded_by = NULL, supersession_reason = NULL, valid_to = NULL"
            " WHERE superseded_by = ANY(CAST(:r AS uuid[]))"), {"r": removed})
        # Surviving facts keep their identity but lose a description the item may have given them.
        survivors = self.conn.execute(text(
            "SELECT id, edge_text, properties->>'description' AS description FROM edges"
            " WHERE id = ANY(CAST(:s AS uuid[])) AND NOT id = ANY(CAST(:r AS uuid[])) ORDER BY id"),
            {"s": shrunk, "r": removed}).all()
        texts = {row.id: without_description(row.edge_text, row.description) for row in survivors}
        if texts:
            self.conn.execute(text(
                "UPDATE edges g SET properties = g.properties - 'description', edge_text = v.t, updated_at = now()"
                " FROM unnest(CAST(:i AS uuid[]), CAST(:t AS text[])) AS v(i, t) WHERE g.id = v.i"),
                {"i": list(texts), "t": list(texts.values())})
        rewritten.update(texts)
        for r in removed:
            rewritten.pop(r, None)
        return linked, removed, shrunk

    def _forget_entities(self, datasets: list[uuid.UUID], linked: list[uuid.UUID]) -> int:
        """Entities nothing links any more go (with unused types); a kept one the forgotten chunks
        mentioned takes its description from a remaining mention. Returns how many went."""
        gone_entities = self.conn.execute(text(
            "DELETE FROM entities e WHERE e.dataset_id = ANY(CAST(:d AS uuid[])) AND NOT EXISTS ("
            " SELECT 1 FROM edges g WHERE g.source_id = e.id OR g.target_id = e.id)"
            # A captured object's node stays while its object does, linked or not.
            " AND NOT EXISTS (SELECT 1 FROM capture_objects o WHERE o.id = e.id) RETURNING e.id, e.name"),
            {"d": datasets}).all()
        self.removed_texts.extend(e.name for e in gone_entities)
        self.removed_ids.update(str(e.id) for e in gone_entities)
        self.conn.execute(text(
            "UPDATE entities e SET description = coalesce((SELECT g.properties->>'description'"
            f"   FROM edges g WHERE g.target_id = e.id AND {MENTIONS}"
            "   AND coalesce(g.properties->>'description', '') <> '' ORDER BY g.created_at, g.id LIMIT 1), '')"
            " WHERE e.id = ANY(CAST(:l AS uuid[]))"), {"l": linked})
        self.conn.execute(text(
            "DELETE FROM entity_types t WHERE t.dataset_id = ANY(CAST(:d AS uuid[]))"
            " AND NOT EXISTS (SELECT 1 FROM entities e WHERE e.type_id = t.id)"), {"d": datasets})
        return len(gone_entities)

    def _forget_learned(self, items: list[uuid.UUID], entries: list[uuid.UUID]) -> list[uuid.UUID]:
        """What improve learned from forgotten items or entries: lessons (and their documents, which
        the caller forgets next), writer decisions, preference statements; the truth basis goes
        with any lesson (the next build makes one from what is left)."""
        e = [str(x) for x in entries]
        lessons = self.conn.execute(text(
            "DELETE FROM lessons WHERE data_item_id = ANY(CAST(:i AS uuid[])) OR member_entry_ids && CAST(:e AS text[])"
            " RETURNING id, dataset_id, data_item_id"), {"i": items, "e": e}).all()
        self.conn.execute(text(
            "DELETE FROM lesson_decisions WHERE lesson_id = ANY(CAST(:l AS uuid[])) OR member_entry_ids && CAST(:e AS text[])"),
            {"l": [r.id for r in lessons], "e": e})
        self.conn.execute(text("DELETE FROM user_preferences WHERE entry_id = ANY(CAST(:e AS uuid[]))"), {"e": entries})
        self.conn.execute(text("DELETE FROM truth_bases WHERE dataset_id = ANY(CAST(:d AS uuid[]))"),
                          {"d": list({r.dataset_id for r in lessons})})
        return [r.data_item_id for r in lessons if r.data_item_id is not None and r.data_item_id not in items]

    def _drop_references(self) -> None:
        """Other runs of the touched datasets stop naming what went: their stage outputs, errors
        and reasons, and their params (the forgotten runs themselves are tombstones already)."""
        if not self.removed_ids or not self._datasets:
            return
        ids = {i.lower() for i in self.removed_ids}
        RunRepository(self.conn).scrub(list(self._datasets), [f"%{i}%" for i in sorted(ids)],
                                       lambda value: drop_references(value, ids), lambda line: _without(line, ids))

    def set_edge_embeddings(self, vectors: dict[uuid.UUID, list[float]]) -> None:
        for edge_id, vector in vectors.items():
            self.conn.execute(text("UPDATE edges SET embedding = CAST(:v AS vector) WHERE id = :i"),
                              {"v": "[" + ",".join(repr(float(x)) for x in vector) + "]", "i": edge_id})

    def forget_dataset(self, dataset: uuid.UUID) -> tuple[Counts, list[tuple[uuid.UUID, str]]]:
        """Every item, then whatever else the dataset holds: sessions, improve history, other runs."""
        items = self._ids("SELECT id FROM data_items WHERE dataset_id = :d", d=dataset)
        counts, rewritten = self.forget_items(items)
        d = {"d": dataset}
        self._note("SELECT question, answer, context FROM session_entries WHERE dataset_id = :d", **d)
        self._note("SELECT name FROM entities WHERE dataset_id = :d", **d)
        counts["session_entries"] += self.conn.execute(
            text("DELETE FROM session_entries WHERE dataset_id = :d"), d).rowcount
        RunRepository(self.conn).delete_flow_runs(dataset, "improve")
        for table in ("session_improve_state", "dataset_improve_state", "improve_claims",
                      "triplet_embeddings", "edges", "entities", "entity_types", "lessons", "lesson_decisions",
                      "user_preferences", "truth_bases"):
            self.conn.execute(text(f"DELETE FROM {table} WHERE dataset_id = :d"), d)  # noqa: S608 - fixed names
        # Maintenance runs over the whole dataset quoted its facts in their outputs.
        counts["runs"] += RunRepository(self.conn).tombstone(self._ids(
            "SELECT id FROM pipeline_runs WHERE dataset_id = :d AND status <> 'forgotten' FOR UPDATE", **d))
        return counts, []
