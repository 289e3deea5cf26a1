"""Browsing memory, pure: facts as an agent reads them (status, intervals, sources), an entity's
dossier, a capped neighbourhood walk, pages of text and lists, and a caller's typed link."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from engram.pipelines import ids
from engram.pipelines.capture.link import edge as capture_edge
from engram.pipelines.errors import BadInput

CALLER = "caller"  # the origin of a link an agent or a person stated by hand


def entity_ref(ref: str) -> tuple[uuid.UUID | None, str]:
    """(id, None-name) for an id, else (None, the normalised name)."""
    try:
        return uuid.UUID(ref.strip()), ""
    except ValueError:
        name = ids.normalise_name(ref)
        if not name:
            raise BadInput(f"entity {ref!r} is blank") from None
        return None, name


def fact_status(row: dict, now: datetime) -> str:
    """current, superseded (a later fact replaced it) or ended (its validity closed)."""
    if row.get("superseded"):
        return "superseded"
    valid_to = row.get("valid_to")
    if valid_to is not None and valid_to <= now:
        return "ended"
    return "current"


def fact(row: dict, *, now: datetime, anchor: uuid.UUID | None = None, intervals: Sequence[dict] = (),
         sources: dict[uuid.UUID, dict] | None = None) -> dict:
    """One edge row as a Fact (models/payloads/browse.py)."""
    props = row.get("properties") or {}
    direction = None
    if anchor is not None:
        direction = "out" if row["source_id"] == anchor else "in" if row["target_id"] == anchor else None
    return {
        "id": row["id"], "predicate": props.get("predicate") or row["relationship"], "direction": direction,
        "source_id": row["source_id"], "source_name": row.get("source_name"),
        "target_id": row["target_id"], "target_name": row.get("target_name"), "text": row.get("edge_text") or "",
        "status": fact_status(row, now), "origin": props.get("origin"), "confidence": props.get("confidence"),
        "valid_from": row.get("valid_from"), "valid_to": row.get("valid_to"),
        "superseded_by": row.get("superseded_by"), "supersession_reason": row.get("supersession_reason"),
        "intervals": [{k: i.get(k) for k in ("valid_from", "valid_to", "starts_at", "ends_at", "ended",
                                             "asserted_at", "superseded_by")} for i in intervals],
        "sources": group_sources(row.get("provenance") or (), sources or {}),
    }


def group_sources(chunk_ids: Iterable[uuid.UUID], by_chunk: dict[uuid.UUID, dict]) -> list[dict]:
    """Chunks -> the items they come from, each with its chunks (unknown chunks skipped)."""
    out: dict[uuid.UUID, dict] = {}
    for chunk in chunk_ids:
        src = by_chunk.get(chunk)
        if src is None:
            continue
        entry = out.setdefault(src["data_item_id"], {"data_item_id": src["data_item_id"], "title": src["title"],
                                                     "chunk_ids": []})
        if chunk not in entry["chunk_ids"]:
            entry["chunk_ids"].append(chunk)
    return list(out.values())


def dossier(entity: dict, rows: Sequence[dict], *, limit: int, intervals: dict[uuid.UUID, list[dict]],
            sources: dict[uuid.UUID, dict], contradictions: Sequence[dict], texts: dict[uuid.UUID, str],
            now: datetime | None = None) -> dict:
    """An entity's facts split current / superseded (or ended), the contradictions among them
    and every item they come from. `rows` may hold one more than `limit` (truncated then)."""
    now = now or datetime.now(UTC)
    facts = [fact(r, now=now, anchor=entity["id"], intervals=intervals.get(r["id"], ()), sources=sources)
             for r in rows[:limit]]
    all_sources: dict[uuid.UUID, dict] = {}
    for f in facts:
        for s in f["sources"]:
            merged = all_sources.setdefault(s["data_item_id"], {**s, "chunk_ids": []})
            merged["chunk_ids"] += [c for c in s["chunk_ids"] if c not in merged["chunk_ids"]]
    return {
        "id": entity["id"], "name": entity["name"], "type": entity.get("type"),
        "description": entity.get("description") or "",
        "current": [f for f in facts if f["status"] == "current"],
        "superseded": [f for f in facts if f["status"] != "current"],
        "contradictions": [conflict(c, texts) for c in contradictions],
        "sources": list(all_sources.values()), "truncated": len(rows) > limit,
    }


def conflict(row: dict, texts: dict[uuid.UUID, str]) -> dict:
    props = row.get("properties") or {}
    between = [row["source_id"], row["target_id"]]
    return {"id": row["id"], "between": between, "texts": [texts[e] for e in between if e in texts],
            "reason": props.get("reason") or row.get("edge_text") or None, "confidence": props.get("confidence")}


def neighbourhood(root: uuid.UUID, edges_of: Callable[[list[uuid.UUID], int], list[dict]], *, depth: int,
                  limit: int) -> tuple[dict[uuid.UUID, int], list[dict], bool]:
    """Breadth-first from `root`: (node -> depth, edges, truncated). `edges_of(nodes, k)` reads
    at most k edges touching the nodes; at most `limit` edges are kept in all."""
    depths = {root: 0}
    kept: dict[uuid.UUID, dict] = {}
    frontier = [root]
    truncated = False
    for level in range(1, depth + 1):
        if not frontier:
            break
        room = limit - len(kept)
        rows = [r for r in edges_of(frontier, room + len(kept) + 1) if r["id"] not in kept]
        if len(rows) > room:
            truncated, rows = True, rows[:room]
        nxt = []
        for r in rows:
            kept[r["id"]] = r
            for end in (r["source_id"], r["target_id"]):
                if end not in depths:
                    depths[end] = level
                    nxt.append(end)
        frontier = nxt
        if truncated:
            break
    return depths, list(kept.values()), truncated


def next_offset(offset: int, returned: int, total: int) -> int | None:
    return offset + returned if offset + returned < total else None


def text_page(text: str, offset: int, max_chars: int) -> tuple[str, int | None]:
    """A page of a text and where the next page starts (None at the end)."""
    if offset > len(text):
        raise BadInput(f"offset {offset} is past the end of the text ({len(text)} characters)")
    end = offset + max_chars
    return text[offset:end], (end if end < len(text) else None)


def link_row(dataset: uuid.UUID, source: dict, target: dict, predicate: str, *, user: str, confidence: float,
             note: str, provenance: list[uuid.UUID]) -> dict:
    """The edge a caller's link writes (capture's edge shape, origin `caller`)."""
    if source["id"] == target["id"]:
        raise BadInput(f"a link needs two different ends: {source['name']!r} is both")
    props: dict[str, Any] = {"origin": CALLER, "confidence": confidence, "linked_by": user}
    if note:
        props["note"] = note
    row = capture_edge(dataset, source["id"], target["id"], predicate, (source["name"], target["name"]), props)
    row["provenance"] = provenance
    return row


def chunk_views(chunks: Sequence[dict], mentions: Iterable[dict]) -> list[dict]:
    """Chunk rows with the entities each mentions (`contains` edges), its main ones first."""
    by_chunk: dict[uuid.UUID, list[dict]] = {}
    for m in mentions:
        by_chunk.setdefault(m["chunk_id"], []).append(
            {"id": m["id"], "name": m.get("display_name") or m.get("name"), "main": bool(m.get("main"))})
    return [{**c, "entities": sorted(by_chunk.get(c["id"], []), key=lambda e: (not e["main"], e["name"] or ""))}
            for c in chunks]
