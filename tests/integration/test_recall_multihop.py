"""Multi-hop recall through the real pipeline (offline extractor, worker, Postgres): a bridge
passage that shares few words with the question is reached through the entity the first
passage names, carries the linking facts, and BM25 statistics follow loads and forgets."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import text

DOCS = {
    "Kiss and Tell (1945 film)": "Kiss and Tell is a 1945 American comedy film starring Shirley Temple as "
                                 "Corliss Archer, a teenage girl who keeps a secret for her friend.",
    "Shirley Temple": "Shirley Temple Black (April 23, 1928 - February 10, 2014) was an actress and singer. "
                      "As an adult she served as Chief of Protocol of the United States and as ambassador "
                      "to Ghana.",
    "Meet Corliss Archer": "Meet Corliss Archer is a radio comedy about a teenage girl, written by F. Hugh "
                           "Herbert and broadcast from 1943.",
    "Janet Waldo": "Janet Waldo was an American radio actress who voiced Corliss Archer on the radio show.",
    "Harbor Theatre": "The Harbor Theatre is a cinema that showed comedy films and a film festival every "
                      "spring for teenage audiences.",
    "Ghana Railway": "The Ghana Railway Corporation runs trains between the cities of Ghana.",
}
QUESTION = "What government position was held by the woman who portrayed Corliss Archer in the film Kiss and Tell?"


@pytest.fixture(scope="module")
def bridge(worker):
    user, name = f"hop-{uuid.uuid4().hex[:8]}", f"multihop-{uuid.uuid4().hex[:8]}"
    statuses = worker.client.remember(dataset=name, user=user, items=[{"text": t, "name": n} for n, t in DOCS.items()],
                                      background=False, timeout=300)
    assert [s.status for s in statuses] == ["completed"] * len(DOCS), [s.error for s in statuses]
    return {"user": user, "dataset": name}


def test_the_default_route_reaches_the_bridge_passage_with_the_facts_that_link_it(client, bridge):
    # top 4 of 6: Janet Waldo (names Corliss Archer, shares the question's words) may rank above it
    result = client.recall(QUESTION, datasets=[bridge["dataset"]], user=bridge["user"], top_k=4)
    assert result.routed and result.search_type == "HYBRID_COMPLETION"
    titles = [i.provenance.title for i in result.items]
    assert "Shirley Temple" in titles, titles
    hop = next(i for i in result.items if i.provenance.title == "Shirley Temple")
    assert "Chief of Protocol" in hop.text
    assert any("Shirley Temple" in fact for fact in hop.via), hop.via
    assert hop.provenance.edge_ids and hop.provenance.chunk_ids
    assert len(result.items) == 4


def test_graph_facts_carry_their_source_passage(client, bridge):
    result = client.recall("Who starred in Kiss and Tell?", datasets=[bridge["dataset"]], user=bridge["user"],
                           search_type="GRAPH_COMPLETION", top_k=5)
    facts = [i for i in result.items if i.kind == "triplet"]
    assert facts and all(i.passage and i.passage in DOCS.values() for i in facts)


def test_bm25_statistics_follow_loads_and_forgets(client, worker, store):
    from engram.adapters.store.search import SearchRepository
    from engram.pipelines.recall.lexical import query_terms

    user, name = f"lex-{uuid.uuid4().hex[:8]}", f"lex-{uuid.uuid4().hex[:8]}"
    texts = ["Otters float in kelp.", "Kelp grows fast in cold water.", "Otters eat urchins and crabs."]
    statuses = client.remember(dataset=name, user=user, items=[{"text": t} for t in texts], background=False,
                               timeout=300)
    with store.unit_of_work() as uow:
        dataset = uow.access.find_dataset(name, user)
        rows = SearchRepository(uow.conn).chunks_bm25([dataset], query_terms("otters urchins"), 10)
    # OR-ed terms: both otter chunks match; the rarer term (urchins) puts its chunk first.
    assert [r["text"] for r in rows] == [texts[2], texts[0]]
    client.forget(dataset=name, user=user, data_item_id=str(statuses[2].data_item_id))
    with store.unit_of_work() as uow:
        rows = SearchRepository(uow.conn).chunks_bm25([dataset], query_terms("otters urchins"), 10)
        left = uow.conn.exec_driver_sql(
            "SELECT count(DISTINCT chunk_id) FROM chunk_terms WHERE dataset_id = %s", (dataset,)).scalar_one()
    assert [r["text"] for r in rows] == [texts[0]] and left == 2


def assert_bm25_statistics_are_fresh(store, dataset) -> None:
    """The statistics migration 0020's triggers keep equal an aggregate over the rows themselves."""
    with store.unit_of_work() as uow:
        kept = uow.conn.execute(text("SELECT chunks, total_length FROM chunk_lex_stats WHERE dataset_id = :d"),
                                {"d": dataset}).one()
        fresh = uow.conn.execute(text("SELECT count(lex_length), COALESCE(sum(lex_length), 0) FROM chunks"
                                      " WHERE dataset_id = :d"), {"d": dataset}).one()
        df = dict(uow.conn.execute(text("SELECT term, df FROM chunk_term_df WHERE dataset_id = :d"),
                                   {"d": dataset}).all())
        counted = dict(uow.conn.execute(text("SELECT term, count(*) FROM chunk_terms WHERE dataset_id = :d"
                                             " GROUP BY term"), {"d": dataset}).all())
    assert tuple(kept) == tuple(fresh) and df == counted


def test_bm25_statistics_are_kept_per_dataset_through_remember_reload_and_forget(client, worker, store):
    user, name = f"lex-{uuid.uuid4().hex[:8]}", f"lex-{uuid.uuid4().hex[:8]}"
    texts = ["Otters float in kelp.", "Kelp grows fast in cold water, kelp everywhere.", "Sea urchins eat kelp."]
    statuses = client.remember(dataset=name, user=user, items=[{"text": t} for t in texts], background=False,
                               timeout=300)
    with store.unit_of_work() as uow:
        dataset = uow.access.find_dataset(name, user)
        stats = uow.search.bm25_statistics([dataset], ["kelp", "otter", "seal"])
    assert stats[0] == 3 and stats[2] == {"kelp": 3, "otter": 1}
    assert_bm25_statistics_are_fresh(store, dataset)
    with store.unit_of_work() as uow:  # a reload that changes a chunk's length, row by row
        uow.conn.execute(text("UPDATE chunks SET lex_length = lex_length + 2 WHERE dataset_id = :d"), {"d": dataset})
    assert_bm25_statistics_are_fresh(store, dataset)
    client.forget(dataset=name, user=user, data_item_id=str(statuses[1].data_item_id))
    assert_bm25_statistics_are_fresh(store, dataset)
    with store.unit_of_work() as uow:
        assert uow.search.bm25_statistics([dataset], ["kelp", "grow"])[::2] == (2, {"kelp": 2})


UNTITLED = [
    "Jaws is a 1975 American thriller film directed by Steven Spielberg and based on the 1974 novel by "
    "Peter Benchley. It stars Roy Scheider as a police chief who hunts a shark.",
    "Steven Allan Spielberg (born December 18, 1946) is an American filmmaker. Born in Cincinnati, Ohio, "
    "he grew up in Phoenix, Arizona, and made amateur war movies as a teenager.",
    "Peter Bradford Benchley (May 8, 1940 - February 11, 2006) was an American author. Born in New York City, "
    "he wrote about the sea and sharks.",
    "Jaws 2 is a 1978 American thriller film directed by Jeannot Szwarc, the sequel to Jaws, again starring "
    "Roy Scheider.",
    "Jaws 3-D is a 1983 American thriller film directed by Joe Alves, the second sequel to Jaws.",
    "Roy Richard Scheider (November 10, 1932 - February 10, 2008) was an American actor. Born in Orange, "
    "New Jersey, he starred in Jaws and Jaws 2.",
]


def test_an_unnamed_passage_about_the_director_is_reached_under_his_full_name(client, worker):
    """No item names: the film passage says "directed by Steven Spielberg", the passage about him opens
    with "Steven Allan Spielberg"; the question's relation word picks him over the novelist and the star."""
    user, name = f"hop-{uuid.uuid4().hex[:8]}", f"untitled-{uuid.uuid4().hex[:8]}"
    statuses = worker.client.remember(dataset=name, user=user, items=[{"text": t} for t in UNTITLED],
                                      background=False, timeout=300)
    assert [s.status for s in statuses] == ["completed"] * len(UNTITLED), [s.error for s in statuses]
    result = client.recall("In what city was the director of the film Jaws born?", datasets=[name], user=user,
                           top_k=2)
    texts = [i.text for i in result.items]
    assert any("Cincinnati" in t for t in texts), texts
    hop = next(i for i in result.items if "Cincinnati" in i.text)
    assert any("Steven Spielberg" in fact for fact in hop.via), hop.via


COACHES = [
    "Douglas Collins is an American basketball coach. He was head coach of the Chicago Bulls from 1986 to "
    "1989, when the team replaced him with his assistant Phil Jackson.",
    "Philip Douglas Jackson is a former professional basketball player. He played college basketball for "
    "the University of North Dakota before joining the New York Knicks.",
    "Stan Albeck was an American basketball coach who was head coach of the Chicago Bulls for one season "
    "before Doug Collins took over.",
    "Johnny Kerr was the first head coach of the Chicago Bulls and later a broadcaster for the team.",
    "Tex Winter was an assistant coach of the Chicago Bulls known for the triangle offense.",
]


def test_a_passage_about_a_person_under_the_full_form_of_a_first_name_is_reached(client, worker):
    """The coach passage says "Phil Jackson"; the passage about him opens with "Philip Douglas
    Jackson" (the entity lookup finds it by the given name's prefix and the surname)."""
    user, name = f"hop-{uuid.uuid4().hex[:8]}", f"coaches-{uuid.uuid4().hex[:8]}"
    statuses = worker.client.remember(dataset=name, user=user, items=[{"text": t} for t in COACHES],
                                      background=False, timeout=300)
    assert [s.status for s in statuses] == ["completed"] * len(COACHES), [s.error for s in statuses]
    result = client.recall("Which university did the assistant who replaced Doug Collins as head coach of the "
                           "Chicago Bulls play college basketball for?", datasets=[name], user=user, top_k=2)
    texts = [i.text for i in result.items]
    assert any("University of North Dakota" in t for t in texts), texts
    hop = next(i for i in result.items if "North Dakota" in i.text)
    assert "Phil Jackson" in " ".join(hop.via), hop.via
