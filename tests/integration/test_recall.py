"""Recall with a real worker (offline LLM), real Postgres + pgvector: every search type on a
small corpus ranks the expected document or fact in its top 3; routing, fallback, sessions."""

from __future__ import annotations

import re
import uuid

import pytest
from sqlalchemy import text

from engram.pipelines import ids
from engram.tasks.client import EngramError

DOCS = {
    "heron.md": "Heron Robotics is a marine robotics company in Port Alder. Heron Robotics was founded in 2009 "
                "by Ingrid Solvang. Alice Moreau is the CEO of Heron Robotics. Heron Robotics makes the "
                "Seabird drone.",
    "seabird.md": "The Seabird drone inspects ship hulls for corrosion. Heron Robotics launched the Seabird "
                  "drone in 2016. The Seabird drone uses a sonar made by Marlow Sonar.",
    "dam.md": "The Greyfen Dam was built in 1962 on the Tessel River. The Greyfen Dam failed during the Great "
              "Flood of 2011. Engineers blamed the collapse on cracked concrete in the spillway.",
    "kestrel.md": "Kestrel Foods is a seafood company in Port Alder. Sunita Rao is the CEO of Kestrel Foods. "
                  "Kestrel Foods buys kelp from the Merrow Cooperative.",
    "festival.md": "The Lantern Festival is held every October in Port Alder. The Lantern Festival started in "
                   "1988. Thousands of paper lanterns float down the harbour on the final night.",
    "institute.md": "The Saltmarsh Institute studies kelp forests along the Merrow Coast. Clara Lindqvist "
                    "lectures at the Saltmarsh Institute.",
}


@pytest.fixture(scope="module")
def corpus(worker):
    """The corpus in its own dataset, owned by its own user (so 'all readable datasets' is just it)."""
    user, name = f"reader-{uuid.uuid4().hex[:8]}", f"recall-{uuid.uuid4().hex[:8]}"
    statuses = worker.client.remember(dataset=name, user=user, items=[{"text": t, "name": n} for n, t in DOCS.items()],
                                      background=False, timeout=300)
    assert [s.status for s in statuses] == ["completed"] * len(DOCS), [s.error for s in statuses]
    return {"user": user, "dataset": name}


def _recall(client, corpus, question: str, search_type: str | None = None, **kw):
    kw.setdefault("datasets", [corpus["dataset"]])
    return client.recall(question, user=corpus["user"], search_type=search_type, top_k=kw.pop("top_k", 5), **kw)


def _top3_titles(result) -> list[str | None]:
    return [i.provenance.title for i in result.items[:3]]


def _top3_texts(result) -> list[str]:
    return [i.text for i in result.items[:3]]


# ------------------------------------------------------------------ chunk lanes


def test_chunks_rank_the_document_that_answers_first(client, corpus):
    result = _recall(client, corpus, "What does the Seabird drone inspect?", "CHUNKS")
    assert result.search_type == "CHUNKS" and not result.routed
    assert "seabird.md" in _top3_titles(result)
    top = result.items[0]
    assert top.kind == "chunk" and top.provenance.dataset == corpus["dataset"]
    assert top.provenance.document_id and top.provenance.chunk_ids
    assert [i.score for i in result.items] == sorted((i.score for i in result.items), reverse=True)


def test_chunks_lexical_ranks_by_bm25_and_always_returns_top_k(client, corpus):
    result = _recall(client, corpus, '"paper lanterns"', "CHUNKS_LEXICAL")
    assert _top3_titles(result)[0] == "festival.md"
    assert "paper lanterns" in result.items[0].text.lower()
    # Terms are OR-ed and scored; fewer matching chunks than top_k are topped up by meaning.
    assert len(result.items) == 5
    assert [i.score for i in result.items] == sorted((i.score for i in result.items), reverse=True)
    rare = _recall(client, corpus, "zyzzyva lanterns", "CHUNKS_LEXICAL", top_k=4)
    assert len(rare.items) == 4 and "lantern" in rare.items[0].text.lower()


def test_summaries_return_the_summary_of_the_document(client, corpus):
    result = _recall(client, corpus, "Which seafood company buys kelp?", "SUMMARIES")
    assert {i.kind for i in result.items} == {"summary"}
    assert "kestrel.md" in _top3_titles(result)


def test_rag_completion_without_an_llm_returns_the_context_and_says_so(client, corpus):
    result = _recall(client, corpus, "What happened to the Greyfen Dam?", "RAG_COMPLETION")
    assert result.generated is False and "no LLM configured" in result.note
    assert not any(i.kind == "answer" for i in result.items)
    assert "dam.md" in _top3_titles(result)


def test_hybrid_completion_fuses_dense_bm25_and_graph_ranks(client, corpus):
    from engram.pipelines.recall.registry import HYBRID_WEIGHTS

    result = _recall(client, corpus, "lanterns on the harbour in October", "HYBRID_COMPLETION")
    assert "festival.md" in _top3_titles(result)
    # Weighted reciprocal-rank scores: at most Σ weights · 1/(rrf_k + 1) · 1.25 with rrf_k = 30 for top_k 5.
    assert all(0 < i.score <= sum(HYBRID_WEIGHTS.values()) * 1.25 / 31 for i in result.items)
    assert len(result.items) == 5


# ------------------------------------------------------------------ graph lanes


def test_graph_completion_returns_the_fact_with_its_provenance(client, corpus):
    result = _recall(client, corpus, "Who is the CEO of Heron Robotics?", "GRAPH_COMPLETION")
    assert "Alice Moreau ceo of Heron Robotics" in _top3_texts(result)
    fact = next(i for i in result.items if i.text == "Alice Moreau ceo of Heron Robotics")
    assert fact.kind == "triplet" and fact.provenance.edge_ids and fact.provenance.title == "heron.md"
    assert result.generated is False and "no LLM configured" in result.note


def test_triplet_completion_finds_the_fact_by_its_text(client, corpus):
    result = _recall(client, corpus, "Who is the CEO of Kestrel Foods?", "TRIPLET_COMPLETION")
    assert "Sunita Rao ceo of Kestrel Foods" in _top3_texts(result)
    assert {i.kind for i in result.items} == {"triplet"}


def test_graph_completion_cot_retrieves_the_fact(client, corpus):
    result = _recall(client, corpus, "Why did the Greyfen Dam fail?", "GRAPH_COMPLETION_COT")
    assert "Greyfen Dam failed during Great Flood" in _top3_texts(result)


def test_context_extension_reaches_facts_beyond_the_first_neighbourhood(client, corpus):
    question = "How is Ingrid Solvang related to Marlow Sonar?"
    plain = _recall(client, corpus, question, "GRAPH_COMPLETION", top_k=3)
    extended = _recall(client, corpus, question, "GRAPH_COMPLETION_CONTEXT_EXTENSION", top_k=3)
    assert "Seabird drone uses sonar made by Marlow Sonar" in _top3_texts(extended)
    assert _top3_texts(extended)[:2] == _top3_texts(plain)[:2]  # the best facts stay first
    # Reached only by expanding from an entity of the first facts (Solvang's "2009").
    reached = [i.text for i in extended.items]
    assert "Heron Robotics founded in 2009" in reached
    assert "Heron Robotics founded in 2009" not in [i.text for i in plain.items]
    assert len(extended.items) == 3  # trimmed to top_k


def test_graph_summary_completion_returns_the_document_summary(client, corpus):
    result = _recall(client, corpus, "Give me an overview of Kestrel Foods", "GRAPH_SUMMARY_COMPLETION")
    assert any(i.kind == "summary" and i.provenance.title == "kestrel.md" for i in result.items[:3])


# ------------------------------------------------------------------ temporal


def test_temporal_finds_what_happened_in_a_year(client, corpus):
    result = _recall(client, corpus, "What happened in 2011?", "TEMPORAL")
    assert "dam.md" in _top3_titles(result)


def test_temporal_keeps_to_the_years_asked_for(client, corpus):
    result = _recall(client, corpus, "What started between 1980 and 1990?", "TEMPORAL")
    assert _top3_titles(result)[0] == "festival.md"
    for item in (i for i in result.items if i.kind == "chunk"):
        years = {int(y) for y in re.findall(r"\b[12]\d{3}\b", item.text)}
        assert years & set(range(1980, 1991)), item.text


# ------------------------------------------------------------------ routing and fallback


def test_feeling_lucky_routes_a_quoted_query_to_lexical(client, corpus):
    result = _recall(client, corpus, '"paper lanterns"', "FEELING_LUCKY")
    assert (result.search_type, result.routed, result.route_score) == ("CHUNKS_LEXICAL", True, 8.0)
    assert _top3_titles(result)[0] == "festival.md"


def test_no_type_and_no_rule_routes_to_hybrid(client, corpus):
    result = _recall(client, corpus, "Who lectures at the Saltmarsh Institute?")
    assert (result.search_type, result.routed, result.route_score) == ("HYBRID_COMPLETION", True, 0.0)
    assert "institute.md" in _top3_titles(result)


def test_a_why_question_keeps_the_default_routes_passages(client, corpus):
    """Auto-routed to the reasoning type for its wording, a "why" question still gets the
    passages the default route finds; pinned, the type uses its own graph lane."""
    routed = _recall(client, corpus, "Why did the Greyfen Dam fail?")
    assert routed.routed and routed.search_type == "GRAPH_COMPLETION_COT"
    default = _recall(client, corpus, "Why did the Greyfen Dam fail?", "HYBRID_COMPLETION")
    assert [i.text for i in routed.items] == [i.text for i in default.items]
    pinned = _recall(client, corpus, "Why did the Greyfen Dam fail?", "GRAPH_COMPLETION_COT")
    assert [i.text for i in pinned.items] != [i.text for i in default.items]


def test_auto_routed_type_that_finds_nothing_falls_back_but_a_pinned_one_stays_empty(client, corpus):
    routed = _recall(client, corpus, "What happened in 1850?")
    assert routed.fallback_from == "TEMPORAL" and routed.search_type == "HYBRID_COMPLETION"
    assert routed.items and "fell back" in routed.note
    pinned = _recall(client, corpus, "What happened in 1850?", "TEMPORAL")
    assert (pinned.search_type, pinned.items, pinned.fallback_from) == ("TEMPORAL", [], None)


def test_agentic_completion_offline_returns_memory_and_an_unknown_type_is_invalid(client, corpus):
    result = _recall(client, corpus, "plan my week", "AGENTIC_COMPLETION")
    assert result.search_type == "AGENTIC_COMPLETION" and not result.generated
    assert result.note.startswith("AGENTIC_COMPLETION needs an LLM") and result.items
    with pytest.raises(EngramError, match="exactly one dataset"):
        _recall(client, corpus, "plan my week", "AGENTIC_COMPLETION", datasets=[])
    with pytest.raises(EngramError, match="invalid payload.*unknown search type"):
        _recall(client, corpus, "anything", "CHUNKZ")


# ------------------------------------------------------------------ session lane


def _add_entry(store, corpus, session: str, question: str, answer: str) -> None:
    with store.unit_of_work() as uow:
        dataset = uow.access.authorise(corpus["dataset"], corpus["user"], "read")
        uow.sessions.add_entry(dataset_id=dataset, session_id=session, user_id=ids.user_id(corpus["user"]),
                               question=question, answer=answer)


def test_session_only_a_hit_answers_and_skips_the_graph(client, corpus, store):
    session = f"s-{uuid.uuid4().hex[:8]}"
    _add_entry(store, corpus, session, "What colour is the Heron Robotics logo?", "Teal with a white heron.")
    result = _recall(client, corpus, "which colour is the heron logo", session_id=session, datasets=[])
    assert result.sources == ["session"]
    assert {i.kind for i in result.items} == {"session"} and "Teal" in result.items[0].text


def test_session_only_without_a_hit_falls_through_to_the_graph(client, corpus, store):
    session = f"s-{uuid.uuid4().hex[:8]}"
    _add_entry(store, corpus, session, "favourite pizza", "margherita")
    result = _recall(client, corpus, "What does the Seabird drone inspect?", "CHUNKS", session_id=session, datasets=[])
    assert result.sources == ["graph"] and result.datasets == [corpus["dataset"]]
    assert "seabird.md" in _top3_titles(result)


def test_session_with_datasets_both_contribute_and_retrieval_alone_stores_nothing(client, corpus, store):
    session = f"s-{uuid.uuid4().hex[:8]}"
    _add_entry(store, corpus, session, "Who founded Heron Robotics?", "Ingrid Solvang, in 2009.")
    result = _recall(client, corpus, "Who founded Heron Robotics?", "RAG_COMPLETION", session_id=session)
    assert result.sources == ["session", "graph"] and result.generated is False
    assert result.items[0].kind == "session" and "heron.md" in [i.provenance.title for i in result.items]
    with store.unit_of_work() as uow:
        dataset = uow.access.authorise(corpus["dataset"], corpus["user"], "read")
        assert len(uow.sessions.entries([dataset], session, 10)) == 1  # no generated answer to keep


def test_exact_scores_of_chunks_equal_the_lexical_lanes_and_keep_its_node_set_filter(store, corpus):
    """Score fusion asks for the BM25 score of a passage the BM25 list left out: it must be the
    score that list would have given it, under the same statistics and node-set filter."""
    from engram.pipelines.recall.lexical import query_terms

    terms = query_terms("kelp company in Port Alder")
    with store.unit_of_work() as uow:
        dataset = uow.access.find_dataset(corpus["dataset"], corpus["user"])
        ranked = uow.search.chunks_bm25([dataset], terms, 10)
        exact = uow.search.chunk_scores([dataset], [r["id"] for r in ranked], [0.1] * 384, terms)
        assert len(ranked) >= 2
        assert {r["id"]: round(float(r["rank"]), 9) for r in ranked} == \
            {cid: round(score, 9) for cid, (_, score) in exact.items()}
        # Given the collection statistics the list came with, only these chunks' postings are read:
        # the same scores, and 0 for a chunk that shares no term with the question.
        other = uow.conn.execute(text("SELECT id FROM chunks WHERE dataset_id = :d AND NOT (id = ANY(:ids)) LIMIT 1"),
                                 {"d": dataset, "ids": [r["id"] for r in ranked]}).scalar()
        fast = uow.search.chunk_scores([dataset], [r["id"] for r in ranked] + [other], [0.1] * 384, terms,
                                       stats=ranked[0]["bm25_stats"])
        assert {cid: round(score, 9) for cid, (_, score) in fast.items() if cid != other} == \
            {cid: round(score, 9) for cid, (_, score) in exact.items()}
        assert fast[other][1] == round(uow.search.chunk_scores([dataset], [other], [0.1] * 384, terms)[other][1], 9)
        uow.search.node_sets = ["a-set-no-document-is-in"]
        try:
            assert uow.search.chunks_bm25([dataset], terms, 10) == []
            outside = uow.search.chunk_scores([dataset], [r["id"] for r in ranked], [0.1] * 384, terms)
            assert {score for _, score in outside.values()} == {0.0}
        finally:
            uow.search.node_sets = []


@pytest.mark.parametrize("full_read", [0, 10**9])
def test_the_pruned_bm25_list_ranks_and_scores_as_bm25s_does(store, corpus, monkeypatch, full_read):
    """chunks_bm25 reads a common term's postings only for chunks the rarer terms found (pruned
    from FULL_READ postings on: here always, then never); its top k must still be bm25s's (Lucene,
    k1 1.5, b 0.75, over the same terms), at every k (this corpus has no two chunks within bm25s's
    float32 precision of each other)."""
    import bm25s

    from engram.adapters.store import search_bm25

    monkeypatch.setattr(search_bm25, "FULL_READ", full_read)

    from engram.pipelines.recall.lexical import query_terms, terms

    with store.unit_of_work() as uow:
        dataset = uow.access.find_dataset(corpus["dataset"], corpus["user"])
        rows = uow.conn.execute(text("SELECT id, text FROM chunks WHERE dataset_id = :d ORDER BY id"),
                                {"d": dataset}).all()
        reference = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
        reference.index([terms(r.text) for r in rows], show_progress=False)
        pruned = 0
        for question in ("Who is the CEO of Heron Robotics in Port Alder?", "kelp company in Port Alder",
                         "When did the Seabird drone of Heron Robotics launch in Port Alder?"):
            asked = query_terms(question)
            scores = reference.get_scores([t for t, n in asked.items() for _ in range(n) if t in reference.vocab_dict])
            want = sorted(((-float(s), str(r.id)) for r, s in zip(rows, scores) if s > 0))
            for k in range(1, len(rows) + 1):
                got = uow.search.chunks_bm25([dataset], asked, k)
                assert [str(r["id"]) for r in got] == [cid for _, cid in want[:k]], (question, k)
                # bm25s scores in float32: equal to its precision.
                assert [float(r["rank"]) for r in got] == pytest.approx([-s for s, _ in want[:k]], rel=1e-6)
                pruned += uow.search.bm25_read["probes"] > 0
        assert bool(pruned) == (full_read == 0)  # common terms read for candidates only, at least once


def test_entity_lookup_patterns_take_percent_and_underscore_in_a_name_literally(store):
    from engram.pipelines.recall.names import lookup

    _, patterns = lookup(["100%_pure"])
    with store.unit_of_work() as uow:
        found = uow.conn.execute(text("SELECT n FROM unnest(CAST(:names AS text[])) n WHERE n LIKE ANY(CAST(:p AS text[]))"
                                      " ORDER BY n"),
                                 {"names": ["100%_pure_co", "100x_pure_co", "100%xpure_co", "the_100%_pure"],
                                  "p": patterns}).scalars().all()
    assert found == ["100%_pure_co", "the_100%_pure"]
