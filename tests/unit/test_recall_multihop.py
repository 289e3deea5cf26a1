"""Pure pieces of the new recall: BM25 terms, weighted fusion, entity aliases, question names,
the multi-hop walk over a fake search port, main titles, the offline extractor's linking."""

from __future__ import annotations

import uuid

from engram.adapters.llm.offline import offline_graph
from engram.models.search import EdgeWindow
from engram.pipelines.cognify.extract import build_graph, main_title
from engram.pipelines.recall import lexical, multihop
from engram.pipelines.recall.context import RecallContext, Scope
from engram.pipelines.recall.ranking import rank_weighted
from engram.adapters.llm.offline import offline_chunk_extraction


def test_bm25_terms_are_lowercased_stemmed_and_stop_words_dropped():
    assert lexical.terms("The Universities of Running rivers, and a river") == [
        "universiti", "run", "river", "river"]
    assert lexical.postings("Otters, otters and kelp") == ({"otter": 2, "kelp": 1}, 3)
    assert lexical.query_terms("otters eat otters") == {"otter": 2, "eat": 1}


def test_a_question_word_whose_stem_is_a_stop_word_is_no_query_term():
    # "its" stems to "it": in about half of all chunks, its postings cost more than all others.
    assert "it" in lexical.terms("its shell")
    assert lexical.query_terms("What did the otter do with its shell being wet?") == {
        "what": 1, "did": 1, "otter": 1, "do": 1, "shell": 1, "wet": 1}


def test_weighted_fusion_counts_only_weighted_lists_and_honours_importance():
    lists = {"dense": ["a", "b"], "bm25": ["b", "c"], "summaries": ["c", "c", "a"]}
    ranked = rank_weighted(lists, {"dense": 1.0, "bm25": 1.0}, 3)
    assert [i for i, _ in ranked] == ["b", "a", "c"]
    heavy = rank_weighted(lists, {"dense": 1.0, "bm25": 3.0}, 3)
    assert heavy[0][0] == "b" and [i for i, _ in heavy][1] == "c"
    low = rank_weighted(lists, {"dense": 1.0, "bm25": 1.0}, 3, importance={"b": 0.0})
    assert low[0][0] == "b" or low[0][1] < ranked[0][1]


def test_aliases_are_leading_and_trailing_runs_of_two_or_more_words():
    assert multihop.same_entity("moscow_state_university", "lomonosov_moscow_state_university")
    assert multihop.same_entity("shirley_temple_black", "shirley_temple")
    assert not multihop.same_entity("state", "moscow_state_university")  # one word is too weak
    assert not multihop.same_entity("temple_black", "shirley_temple")


def test_question_names_are_capitalised_spans():
    exact, named = multihop.question_names("Who directed the film Kiss and Tell in 1945?")
    assert "kiss_and_tell" in exact and "kiss_and_tell" in named
    assert "who" not in exact and "the" not in exact and "kiss" in exact


class FakeSearch:
    """Two passages: the seed names Shirley Temple; the bridge is about Shirley Temple Black."""

    def __init__(self):
        self.seed, self.bridge, self.other = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
        self.st, self.stb, self.fact = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
        self.window = None

    def chunk_entities(self, datasets, chunk_ids):
        return [{"chunk_id": self.seed, "id": self.st, "name": "shirley_temple", "display_name": "Shirley Temple",
                 "type": "person", "main": False},
                {"chunk_id": self.seed, "id": uuid.uuid4(), "name": "1945", "display_name": "1945",
                 "type": "date", "main": False}]

    def entities_named(self, datasets, names):
        return []

    def chunks_by_ids(self, chunk_ids):
        return {self.seed: {"id": self.seed, "text": "Kiss and Tell is a 1945 comedy starring Shirley Temple."}}

    def entity_passages(self, datasets, names, patterns, max_degree):
        assert "shirley\\_temple\\_%" in patterns  # the name literally: its own _ escaped too
        return [{"chunk_id": self.bridge, "id": self.stb, "name": "shirley_temple_black",
                 "display_name": "Shirley Temple Black", "type": "person", "main": True, "degree": 1},
                {"chunk_id": self.other, "id": self.st, "name": "shirley_temple", "display_name": "Shirley Temple",
                 "type": "person", "main": False, "degree": 2},
                {"chunk_id": self.seed, "id": self.st, "name": "shirley_temple", "display_name": "Shirley Temple",
                 "type": "person", "main": False, "degree": 2}]

    def facts_in_chunks(self, datasets, chunk_ids, entity_ids, window):
        self.window = window
        return [{"id": self.fact, "source_id": uuid.uuid4(), "target_id": self.st, "relationship": "starring",
                 "source_name": "Kiss and Tell", "target_name": "Shirley Temple"}]


def test_expansion_reaches_the_passage_about_the_bridge_entity_first():
    search = FakeSearch()
    ctx = RecallContext("What position did the star of Kiss and Tell hold?", 5, Scope([uuid.uuid4()], {}), search,
                        None, EdgeWindow(include_history=False))
    bridges = multihop.expand(ctx, [search.seed], 10)
    scores = {b.chunk_id: b.score for b in bridges}
    assert bridges[0].chunk_id == search.bridge  # what the seed's entity is about comes first
    assert scores[search.seed] == multihop.RESTART  # the seed keeps its restart mass, never reaches itself
    assert scores.get(search.other, 0.0) < scores[search.seed]  # a mere mention weighs little
    top = bridges[0]
    assert top.facts == ["Kiss and Tell starring Shirley Temple"] and top.edge_ids == [search.fact]
    assert search.window == ctx.window  # supersession / as_of apply to the linking facts


def test_main_title_reads_names_only():
    assert main_title("Kiss and Tell (1945 film)") == "Kiss and Tell"
    assert main_title("report.md") == "report"
    assert main_title("A first line that is really a whole sentence of the text, not a title.") is None


def test_build_graph_links_every_chunk_to_the_main_entities():
    dataset, c1, c2 = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
    texts = ["Shirley Temple Black was an actress.", "She later served as an ambassador."]
    draft = build_graph(dataset, [(c1, texts[0]), (c2, texts[1])], [offline_chunk_extraction(t) for t in texts],
                        title="Shirley Temple")
    main = {(e.source_id, e.target_id) for e in draft.edges if e.properties.get("main")}
    names = {e.id: e.name for e in draft.entities}
    assert {names[t] for _, t in main} == {"Shirley Temple", "Shirley Temple Black"}
    assert {s for s, _ in main} == {c1, c2}


def test_offline_extractor_links_names_not_noise():
    graph = offline_graph('Released in 1994, "The Amber Corridor" was directed by Phillip Gene Ruffin. '
                          "Reviewers praised it. Ruffin grew up in Tellow.")
    names = {n.name for n in graph.nodes}
    assert "The Amber Corridor" in names and "Phillip Gene Ruffin" in names
    assert not names & {"Released", "Reviewers", "Ruffin"}  # noise words; the surname is the same person
    by_id = {n.id: n for n in graph.nodes}
    assert all(by_id[e.source_node_id].type != "date" for e in graph.edges)
    assert any(by_id[e.source_node_id].name == "Phillip Gene Ruffin" and by_id[e.target_node_id].name == "Tellow"
               for e in graph.edges)


def test_chunk_years_follow_the_one_date_rule():
    from engram.pipelines.dates import years_named

    assert years_named("Built in 1962, it failed in March 2011 and again on 3 May 2011; 1200 employees.") == [1962, 2011]
    assert years_named("no dates here") == []


def test_a_company_is_the_same_entity_with_or_without_its_legal_form():
    assert multihop.same_entity("apple", "apple_inc.")
    assert multihop.same_entity("harbor_dynamics_ltd", "harbor_dynamics")
    assert not multihop.same_entity("apple", "apple_records")


def test_a_camel_case_name_in_the_question_is_a_name():
    exact, _ = multihop.question_names("Which company designs the iPhone?")
    assert "iphone" in exact


def test_offline_extractor_keeps_a_names_number_and_drops_military_ranks():
    graph = offline_graph("Apollo 11 landed on the Moon. Commander Neil Armstrong flew it, and on June 12 he "
                          "watched Jaws 2 and Jaws 3-D. Jaws was better.")
    names = [n.name for n in graph.nodes]
    assert {"Apollo 11", "Neil Armstrong", "Jaws 2", "Jaws 3-D", "Jaws"} <= set(names)
    assert "June 12" not in names  # a day, not a name
    assert "Apollo" not in names and "Commander Neil Armstrong" not in names


def test_a_full_name_is_the_same_entity_as_its_first_and_last_word():
    assert multihop.same_entity("neil_armstrong", "neil_alden_armstrong")
    assert multihop.same_entity("philip_k._dick", "philip_kindred_dick")
    assert not multihop.same_entity("university_of_california", "university_of_southern_california")
    assert not multihop.same_entity("apollo_11", "apollo_12")
    assert not multihop.same_entity("manchester_united_football_club", "manchester_city_football_club")


def test_matcher_finds_every_name_a_linked_entity_is():
    names = ["neil_armstrong", "jaws", "jaws_2", "moscow_state_university", "apple", "philip_k._dick", "mozart",
             "manchester_united_football_club", "john_fitzgerald_kennedy"]
    match = multihop.Matcher(names, surnames=["mozart"])
    expected = {
        "neil_alden_armstrong": ["neil_armstrong"], "jaws_2": ["jaws_2"], "jaws": ["jaws"],
        "lomonosov_moscow_state_university": ["moscow_state_university"], "apple_inc.": ["apple"],
        "philip_kindred_dick": ["philip_k._dick"], "philip_k._dick": ["philip_k._dick"],
        "wolfgang_amadeus_mozart": ["mozart"],  # the cued surname
        "john_f._kennedy": ["john_fitzgerald_kennedy"],
        "state": [], "apollo_11": [], "manchester_city_football_club": [],
    }
    for other, want in expected.items():
        assert match(other) == want, other
    assert multihop.Matcher(["apple_inc.", "apple"])("apple") == ["apple_inc.", "apple"]  # in the names' order
    assert not multihop.same_entity("mozart", "wolfgang_amadeus_mozart")  # a surname only when cued


class FilmSearch:
    """A film passage naming its director and the novelist it is based on; each has a passage about
    them under a fuller name. The novelist is named in fewer passages (more specific)."""

    def __init__(self, seed_text: str):
        self.seed, self.director, self.novelist = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
        self.seed_text = seed_text

    def chunk_entities(self, datasets, chunk_ids):
        return [{"chunk_id": self.seed, "id": uuid.uuid4(), "name": n, "display_name": d, "type": "person",
                 "main": False} for n, d in (("steven_spielberg", "Steven Spielberg"),
                                             ("peter_benchley", "Peter Benchley"))]

    def entities_named(self, datasets, names):
        return []

    def chunks_by_ids(self, chunk_ids):
        return {self.seed: {"id": self.seed, "text": self.seed_text}}

    def entity_passages(self, datasets, names, patterns, max_degree):
        assert "steven\\_%\\_spielberg" in patterns  # finds "Steven Allan Spielberg"
        return [{"chunk_id": self.director, "id": uuid.uuid4(), "name": "steven_allan_spielberg",
                 "display_name": "Steven Allan Spielberg", "type": "person", "main": True, "degree": 3},
                {"chunk_id": self.novelist, "id": uuid.uuid4(), "name": "peter_bradford_benchley",
                 "display_name": "Peter Bradford Benchley", "type": "person", "main": True, "degree": 1}]

    def facts_in_chunks(self, datasets, chunk_ids, entity_ids, window):
        return []


def _walk(question: str, seed_text: str):
    search = FilmSearch(seed_text)
    ctx = RecallContext(question, 5, Scope([uuid.uuid4()], {}), search, None, EdgeWindow(include_history=False))
    return search, [b.chunk_id for b in multihop.expand(ctx, [search.seed], 10) if not b.seed]


def test_the_entity_next_to_the_questions_relation_word_is_the_bridge():
    text = "Jaws is a 1975 thriller directed by Steven Spielberg and based on the novel by Peter Benchley."
    search, reached = _walk("In what city was the director of Jaws born?", text)
    assert reached == [search.director, search.novelist]
    search, reached = _walk("In what city was the author of the novel behind Jaws born?", text)
    assert reached == [search.novelist, search.director]  # "novel" sits next to Benchley


def test_a_question_name_inside_a_longer_one_is_not_asked_for():
    seen = {}

    class Search(FilmSearch):
        def entities_named(self, datasets, names):
            return [{"name": n, "display_name": n, "type": "work"} for n in ("jaws", "jaws_2") if n in names]

        def entity_passages(self, datasets, names, patterns, max_degree):
            seen.setdefault("names", set(names))
            return []

    search = Search("Jaws 2 is a 1978 film.")
    ctx = RecallContext("Which was released first, Jaws 2 or Alien?", 5, Scope([uuid.uuid4()], {}), search, None,
                        EdgeWindow(include_history=False))
    multihop.expand(ctx, [search.seed], 10)
    assert "jaws_2" in seen["names"] and "jaws" not in seen["names"]


def test_a_scored_list_keeps_the_distance_between_its_head_and_the_rest():
    lists = {"dense": ["a", "b", "c"], "graph": ["c", "b", "a"]}
    flat = rank_weighted(lists, {"dense": 1.0, "graph": 1.0}, 3)
    assert {i for i, _ in flat[:2]} == {"a", "c"}  # rank alone: a and c tie
    scored = rank_weighted(lists, {"dense": 1.0, "graph": 1.0}, 3, scores={"graph": {"c": 4.0, "b": 1.0, "a": 1.0}})
    assert scored[0][0] == "c"


def test_a_forked_child_prefetches_the_question_vector_too():
    """The background pool is per process: a child forked after its parent prefetched would
    otherwise wait forever on a pool whose threads stayed behind."""
    import os

    class Embedder:
        def embed(self, texts):
            return [[float(len(t)), 1.0] for t in texts]

    def prefetched(question: str) -> list[float]:
        ctx = RecallContext(question, 5, Scope([uuid.uuid4()], {}), None, Embedder())
        ctx.prefetch_vector()
        return ctx.vector()

    assert prefetched("parent") == [6.0, 1.0]
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: exits 0 only if its prefetch answers
        os.close(read)
        signal_ok = prefetched("child!") == [6.0, 1.0]
        os.write(write, b"ok" if signal_ok else b"no")
        os._exit(0)
    os.close(write)
    import select

    ready, _, _ = select.select([read], [], [], 20)
    try:
        assert ready, "the child's prefetch never answered"
        assert os.read(read, 2) == b"ok"
    finally:
        os.close(read)
        if not ready:
            os.kill(pid, 9)
        os.waitpid(pid, 0)


def test_a_quoted_nickname_is_part_of_the_name_and_the_opening_name_is_main():
    text = 'Bryan David "Butch" Vig (born August 2, 1955) is an American drummer. Born in Viroqua, he formed Garbage.'
    names = {n.name for n in offline_graph(text).nodes}
    assert "Bryan David Butch Vig" in names and not names & {"Butch", "Bryan David", "Vig", "Born"}
    assert {n.name for n in offline_graph('When Earvin "Magic" Johnson retired, hired CEO Bryan "Butch" Vig.').nodes} \
        == {"Earvin Magic Johnson", "Bryan Butch Vig"}  # an opening word or a title is no part of the name
    assert "Born This Way" in {n.name for n in offline_graph("Born This Way is an album by Lady Gaga.").nodes}
    draft = build_graph(uuid.uuid4(), [(uuid.uuid4(), text)], [offline_chunk_extraction(text)], title=None)
    main = {e.target_id for e in draft.edges if e.properties.get("main")}
    assert [e.name for e in draft.entities if e.id in main] == ["Bryan David Butch Vig"]
    assert multihop.same_entity("butch_vig", "bryan_david_butch_vig")  # how other passages name him


def test_the_name_an_opening_says_its_subject_is_known_as_is_main_too():
    text = "Ronaldo Luis Nazario de Lima, commonly known as Ronaldo, is a Brazilian striker. He debuted for Cruzeiro."
    draft = build_graph(uuid.uuid4(), [(uuid.uuid4(), text)], [offline_chunk_extraction(text)], title=None)
    main = {e.target_id for e in draft.edges if e.properties.get("main")}
    assert {e.name for e in draft.entities if e.id in main} == {"Ronaldo Luis Nazario de Lima", "Ronaldo"}
    text = "Apple Inc. is an American company. Its campus, known as Apple Park, opened in 2017."
    draft = build_graph(uuid.uuid4(), [(uuid.uuid4(), text)], [offline_chunk_extraction(text)], title=None)
    main = {e.target_id for e in draft.edges if e.properties.get("main")}
    assert "Apple Park" not in {e.name for e in draft.entities if e.id in main}  # only the opening sentence


def test_a_brand_named_after_its_maker_stays_apart_from_the_maker():
    names = {n.name for n in offline_graph("Cadbury Dairy Milk is a chocolate made by Cadbury since 1905.").nodes}
    assert {"Cadbury Dairy Milk", "Cadbury"} <= names


def test_a_short_first_name_is_the_same_person_as_the_full_one():
    match = multihop.Matcher(["phil_jackson", "bill_clinton", "harpers_magazine"])
    assert match("philip_douglas_jackson") == ["phil_jackson"]
    assert match("william_jefferson_clinton") == ["bill_clinton"]
    assert match("harvard_magazine") == [] and match("phoebe_jackson") == []
    places_and_women = multihop.Matcher(["south_africa", "dan_smith", "chris_evans"])
    for other in ("southern_africa", "danielle_smith", "christine_evans"):
        assert places_and_women(other) == [], other
    assert places_and_women("christopher_evans") == ["chris_evans"]


def test_a_full_name_meets_a_longer_name_it_opens_or_closes():
    match = multihop.Matcher(["porter_wagoner_show", "manchester_united_football_club",
                              "oxford_university_press"])
    assert match("porter_wayne_wagoner") == ["porter_wagoner_show"]  # the show is named after him
    assert match("manchester_city_football_club") == [] and match("oxford_brookes_university") == []


def test_a_cued_lone_word_finds_full_names_only_when_it_is_a_rare_proper_name():
    ids = {k: uuid.uuid4() for k in ("seed", "vig", "moog", "american")}
    asked = {}

    class Search:
        def chunk_entities(self, datasets, chunk_ids):
            return [{"chunk_id": ids["seed"], "id": uuid.uuid4(), "name": n, "display_name": d, "type": "concept",
                     "main": False} for n, d in (("vig", "Vig"), ("moog", "Moog"), ("american", "American"))]

        def entities_named(self, datasets, names):
            return []

        def chunks_by_ids(self, chunk_ids):
            return {ids["seed"]: {"id": ids["seed"], "text": "Nevermind was produced by Vig with Moog gear and "
                                                            "American producers; american fans loved it."}}

        def entity_passages(self, datasets, names, patterns, max_degree):
            asked["patterns"] = set(patterns)
            seed = [{"chunk_id": ids["seed"], "id": uuid.uuid4(), "name": n, "display_name": n, "type": "concept",
                     "main": False, "degree": d} for n, d in (("vig", 1), ("moog", 30), ("american", 3))]
            return seed + [{"chunk_id": ids[k], "id": uuid.uuid4(), "name": n, "display_name": n, "type": "person",
                            "main": True, "degree": 1}
                           for k, n in (("vig", "bryan_david_butch_vig"), ("moog", "robert_moog"),
                                        ("american", "scientific_american"))]

        def facts_in_chunks(self, datasets, chunk_ids, entity_ids, window):
            return []

    ctx = RecallContext("Who was the producer of Nevermind?", 5, Scope([uuid.uuid4()], {}), Search(), None,
                        EdgeWindow(include_history=False))
    reached = [b.chunk_id for b in multihop.expand(ctx, [ids["seed"]], 10) if not b.seed]
    assert "%\\_vig" in asked["patterns"]
    # Vig is a surname; Moog is named in 30 passages; "american" is written in lower case beside it.
    assert reached == [ids["vig"]]


def test_lookup_patterns_match_a_name_with_percent_and_underscore_literally():
    from engram.pipelines.recall.names import like_words, lookup

    _, patterns = lookup(["100%_pure"])
    assert "100\\%\\_pure\\_%" in patterns and "%\\_100\\%\\_pure" in patterns
    assert like_words("100\\%\\_pure\\_%") == ["100%", "pure", None]
    assert like_words("%\\_a\\\\b") == [None, "a\\b"]
    # No pattern holds an unescaped wildcard inside the name: "100x_pure_co" is not found.
    assert not any(_like("100x_pure_co", p) or _like("100%xpure_co", p) for p in patterns)
    assert any(_like("100%_pure_co", p) for p in patterns)


def _like(value: str, pattern: str) -> bool:
    """SQL LIKE (escape \\) in Python, for the test above."""
    import re

    out, chars = "", iter(pattern)
    for c in chars:
        out += re.escape(next(chars, "")) if c == "\\" else ".*" if c == "%" else "." if c == "_" else re.escape(c)
    return re.fullmatch(out, value, re.S) is not None
