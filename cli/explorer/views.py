"""What the pages show, shaped from the tasks' answers (pure): a run's stages on a timeline,
a document's facts by chunk, an entity's neighbourhood as vis-network data."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

DONE = frozenset({"completed", "partial", "failed", "forgotten"})


def _time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def timeline(runs: Iterable[dict], now: datetime) -> list[dict]:
    """Each run with its stages placed on the run's own span: `left` and `width` in percent of it,
    `seconds` each stage took (so far), `resumed` when a stage or the run needed more than one attempt."""
    out = []
    for run in runs:
        starts = [_time(s["started_at"]) for s in run["stages"] if s.get("started_at")]
        begin = min(starts, default=None) or _time(run.get("created_at")) or now
        ends = [_time(s.get("finished_at")) or now for s in run["stages"] if s.get("started_at")]
        end = max([*ends, _time(run.get("finished_at")) or begin], default=begin)
        span = max((end - begin).total_seconds(), 1e-6)
        stages = []
        for s in run["stages"]:
            start, finish = _time(s.get("started_at")), _time(s.get("finished_at"))
            placed = {"left": 0.0, "width": 0.0, "seconds": None}
            if start is not None:
                stop = finish or now
                placed = {"left": round(100 * (start - begin).total_seconds() / span, 2),
                          "width": round(max(100 * (stop - start).total_seconds() / span, 0.5), 2),
                          "seconds": round((stop - start).total_seconds(), 3)}
            stages.append({**s, **placed, "resumed": s.get("attempts", 0) > 1,
                           "tokens": s.get("prompt_tokens", 0) + s.get("completion_tokens", 0)})
        out.append({**run, "stages": stages, "seconds": round(span, 3) if starts else None,
                    "live": run["status"] not in DONE,
                    "resumed": run.get("attempts", 0) > 1 or any(s["resumed"] for s in stages)})
    return out


def facts_by_chunk(facts: Iterable[dict]) -> dict[str, list[dict]]:
    """chunk id -> the facts whose provenance names it (a fact stated twice is under both chunks)."""
    out: dict[str, list[dict]] = {}
    for fact in facts:
        for source in fact.get("sources") or ():
            for chunk in source.get("chunk_ids") or ():
                out.setdefault(str(chunk), []).append(fact)
    return out


def contradicted(dossier: dict) -> dict[str, list[str]]:
    """fact id -> what contradicts it (the texts of the other side and the reason)."""
    out: dict[str, list[str]] = {}
    for c in dossier.get("contradictions") or ():
        note = " / ".join(c.get("texts") or ()) + (f" ({c['reason']})" if c.get("reason") else "")
        for fact in c.get("between") or ():
            out.setdefault(str(fact), []).append(note)
    return out


def vis_graph(graph: dict, flagged: dict[str, list[str]] | None = None) -> dict:
    """nodes and edges as vis-network reads them: the root larger, a fact no longer current dashed
    and grey, a contradicted one red; titles carry the fact's text and status."""
    flagged = flagged or {}
    nodes = [{"id": str(n["id"]), "label": n.get("name") or str(n["id"])[:8], "group": n.get("type") or "entity",
              "value": 3 if n["depth"] == 0 else 2 if n["depth"] == 1 else 1, "depth": n["depth"],
              "title": f"{n.get('name')} ({n.get('type') or 'entity'})"} for n in graph.get("nodes") or ()]
    edges = []
    for e in graph.get("edges") or ():
        current = e.get("status") == "current"
        disputed = str(e["id"]) in flagged
        edges.append({
            "id": str(e["id"]), "from": str(e["source_id"]), "to": str(e["target_id"]),
            "label": e.get("predicate", "").replace("_", " "), "arrows": "to", "dashes": not current,
            "color": {"color": "#c0392b" if disputed else "#2c7a4b" if current else "#9aa0a6"},
            "title": f"{e.get('text', '')} [{e.get('status')}{', contradicted' if disputed else ''}]",
            "status": e.get("status"), "contradicted": disputed,
        })
    return {"nodes": nodes, "edges": edges, "root": str(graph.get("root", "")),
            "truncated": bool(graph.get("truncated"))}


def split_list(value: str | None) -> list[str]:
    """"a, b ,c" -> ["a", "b", "c"] (a form field holding a list)."""
    return [v.strip() for v in (value or "").split(",") if v.strip()]
