"""extract_agent_context: what an agent's traces keep saying becomes memory, through
distillation's admission and publication (SPEC 6.4): a decision per candidate, kept with its
reason when rejected; a lesson per admitted statement (id from the statement, so a retry or a
second session never publishes it twice) in node sets session_learnings[:session]; the session's
context watermark moves over the traces read.

Deterministic (works offline). Candidates:
- the caller's stated facts and preferences: sentences of the caller's own words (the trace's
  inputs) such as "I prefer …", "my … is …", "I work at …"; a question, a hedge ("maybe",
  "today", "for now") → not_durable; a statement already learned → already_known; such a
  sentence found only in the function's answer → unsupported (not the caller's words);
- tool outcomes: a function failing with the same error type in at least RECURRING traces of
  the session (counting earlier ones) → "<function> fails repeatedly with <Error>."; a single
  failure → not_durable (a later one makes it recurring).
"""

from __future__ import annotations

import re
import uuid
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

from engram.pipelines.flow import Published
from engram.pipelines.ids import lesson_id, statement_key, trace_entry_id
from engram.pipelines.improve import distill as d
from engram.pipelines.improve.stages import preferences
from engram.pipelines.improve.stages.agent_traces import NO_NEW_TRACES, user_words, window_bounds
from engram.pipelines.improve.stages.distillation import add_lesson_document, decision_row
from engram.prompts.distillation import ProposedLesson, WrittenLesson

RECURRING = 2
MAX_CHARS = 300
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_FACT = re.compile(
    r"\bmy\s+(\w+\s+){0,2}(is|are|was)\b"
    r"|\bi\s*(am|'m)\s+(a|an|the|from|based|allergic|vegetarian|vegan|married|single|\d+)\b"
    r"|\bi\s+(live|work|study|speak|use|own|have\s+(a|an|two|three|\d+))\b"
    r"|\bcall\s+me\b",
    re.IGNORECASE,
)
_HEDGE = re.compile(r"\b(maybe|perhaps|might|not\s+sure|wonder(ing)?|today|tonight|right\s+now|this\s+time"
                    r"|for\s+now|at\s+the\s+moment)\b", re.IGNORECASE)


def stated(text: str | None) -> list[str]:
    """Sentences stating a fact about or a preference of the speaker, in order, once each."""
    out: dict[str, str] = {}
    for sentence in _SENTENCE.split(text or ""):
        sentence = re.sub(r"\s+", " ", sentence).strip()
        if sentence and (preferences.PREFERENCE_CUES.search(sentence) or _FACT.search(sentence)):
            out.setdefault(statement_key(sentence), sentence[:MAX_CHARS])
    return list(out.values())


def function_name(qualname: str) -> str:
    """A traced function's name as people say it (a nested function without its `<locals>` path)."""
    return qualname.split("<locals>.")[-1]


def error_type(error: str) -> str:
    return error.split(":", 1)[0].strip()[:100] or "an error"


def _decision(working: str, members: Sequence[str], *, accept: bool, reason: str | None = None,
              statement: str = "", why: str = "", entities: Sequence[str] = ()) -> d.Decision:
    return d.Decision(ProposedLesson(working_statement=working[:2000], member_entry_ids=list(members)),
                      WrittenLesson(accept=accept, reason=reason, statement=statement[:2000], why_learned=why[:500],
                                    entities=list(entities)))


def decide(dataset_id: uuid.UUID, traces: Sequence[Mapping], earlier_failures: Iterable[Mapping],
           known: set[uuid.UUID]) -> list[d.Decision]:
    """One session's decisions over its new traces (chronological). `earlier_failures`: its failed
    traces below the window; `known`: lesson ids learned before (any session, not this run)."""
    decisions: dict[str, d.Decision] = {}

    def add(x: d.Decision) -> None:
        decisions.setdefault(statement_key(x.proposal.working_statement), x)

    said_by_caller = set()
    for t in traces:
        member = str(trace_entry_id(t["id"]))
        who = t.get("user_name") or "the user"
        for sentence in stated(user_words(t["inputs"])):
            said_by_caller.add(statement_key(sentence))
            statement = f"{who} said: {sentence}"
            if sentence.endswith("?") or _HEDGE.search(sentence):
                add(_decision(sentence, [member], accept=False, reason="not_durable"))
            elif lesson_id(dataset_id, statement) in known:
                add(_decision(sentence, [member], accept=False, reason="already_known", statement=statement))
            else:
                add(_decision(sentence, [member], accept=True, statement=statement, entities=[who],
                              why=f"{who} stated it when calling {function_name(t['function'])}"))
    for t in traces:  # the function's own answer is no statement of the caller's
        for sentence in stated(t.get("result")):
            if statement_key(sentence) not in said_by_caller:
                add(_decision(sentence, [str(trace_entry_id(t["id"]))], accept=False, reason="unsupported"))

    failures: dict[tuple[str, str], list[Mapping]] = {}
    for t in [*earlier_failures, *traces]:
        if t.get("error"):
            failures.setdefault((function_name(t["function"]), error_type(t["error"])), []).append(t)
    window = {t["id"] for t in traces}
    for (function, kind), failed in failures.items():
        if not any(t["id"] in window for t in failed):
            continue  # decided when those traces were new
        members = [str(trace_entry_id(t["id"])) for t in failed if t["id"] in window]
        working = f"{function} failed with {kind}"
        statement = f"{function} fails repeatedly with {kind}."
        if len(failed) < RECURRING:
            add(_decision(working, members, accept=False, reason="not_durable"))
        elif lesson_id(dataset_id, statement) in known:
            add(_decision(working, members, accept=False, reason="already_known", statement=statement))
        else:
            last = d.cut(failed[-1]["error"], 200)
            add(_decision(working, members, accept=True, statement=statement, entities=[function],
                          why=f"{len(failed)} traced calls failed, the last with {last}"))
    return list(decisions.values())


def summary(traces: int, decisions: Sequence[d.Decision], published: int) -> dict:
    rejected = Counter(x.reason for x in decisions if not x.accepted)
    return {"traces": traces, "proposals": len(decisions), "accepted": sum(x.accepted for x in decisions),
            "published": published, "rejected": dict(rejected)}


# ------------------------------------------------------------------ the stage


def load(uow, ctx) -> dict[str, dict]:
    """Per session: its traces above the context watermark and its earlier failed traces."""
    marks = uow.agentic.trace_watermarks(ctx.dataset_id, ctx.session_ids)
    out = {}
    for sid in ctx.session_ids:
        after, upto = window_bounds(ctx, sid, "context", marks)
        traces = uow.agentic.trace_window(ctx.dataset_id, sid, after, upto) if upto > after else []
        if traces:
            out[sid] = {"upto": upto, "traces": traces,
                        "earlier_failures": uow.agentic.trace_window(ctx.dataset_id, sid, 0, after, errors_only=True)}
    return out


def gate(uow, ctx):
    return None if load(uow, ctx) else ("skipped", NO_NEW_TRACES)


def compute(windows: dict[str, dict], ctx) -> dict:
    """Decide what each session's traces teach and embed the lessons (a read of the lessons known)."""
    candidates = [lesson_id(ctx.dataset_id, s) for w in windows.values() for t in w["traces"]
                  for s in _possible_statements(t)]
    with ctx.ports.read() as uow:
        # A lesson this run wrote before a retry is not "known": it is published (idempotently) again.
        known = uow.agentic.lessons_not_of_run(candidates, ctx.run_id)
    by_session = {sid: decide(ctx.dataset_id, w["traces"], w["earlier_failures"], known)
                  for sid, w in windows.items()}
    plans = {sid: d.publications(ctx.dataset_id, sid, xs) for sid, xs in by_session.items()}
    fresh = {p.lesson_id: p for ps in plans.values() for p in ps}
    vectors = dict(zip(fresh, ctx.ports.embedder().embed([p.statement for p in fresh.values()]))) if fresh else {}
    return {"by_session": by_session, "plans": plans, "vectors": vectors}


def publish(uow, ctx, windows: dict[str, dict], result: dict) -> Published:
    """Record the decisions and the lessons with their documents; the engine cognifies them here,
    in order, then persist moves the watermarks."""
    counts, to_cognify, done = {}, [], set()
    for sid, decisions in result["by_session"].items():
        published = 0
        for p in result["plans"][sid]:
            if p.lesson_id in done:
                continue
            started = add_lesson_document(uow, ctx, p, result["vectors"][p.lesson_id])
            done.add(p.lesson_id)
            if started is not None:
                published += 1
                if started[1]:
                    to_cognify.append(started)
        uow.learning.record_decisions([decision_row(ctx, sid, x) for x in decisions])
        counts[sid] = summary(len(windows[sid]["traces"]), decisions, published)
    return Published(tuple(to_cognify), counts)


def persist(uow, ctx, windows: dict[str, dict], counts: dict) -> dict:
    for sid, window in windows.items():
        uow.agentic.advance_trace_watermarks(ctx.dataset_id, sid, context=window["upto"])
    return {"sessions": counts, **{k: sum(c[k] for c in counts.values()) for k in ("traces", "accepted", "published")}}


def _possible_statements(trace: Mapping) -> list[str]:
    """Every statement `decide` could publish for this trace (to look up which are known)."""
    who = trace.get("user_name") or "the user"
    out = [f"{who} said: {s}" for s in stated(user_words(trace["inputs"]))]
    if trace.get("error"):
        out.append(f"{function_name(trace['function'])} fails repeatedly with {error_type(trace['error'])}.")
    return out
