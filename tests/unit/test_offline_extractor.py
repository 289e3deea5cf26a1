"""Offline extractor: deterministic, valid, and good enough to link names without an LLM."""

from __future__ import annotations

import uuid

from engram.adapters.llm.offline import offline_chunk_extraction, offline_graph, offline_summary
from engram.models.graph import ChunkExtraction, KnowledgeGraph
from engram.pipelines.cognify.extract import build_graph

STORY = (
    "Alice is the CEO of Acme Corp. She founded Acme Corp in 1999 with Bob Smith. "
    "The Bank of England raised rates on March 3, 2021. "
    "Dr. Jane Goodall studied chimpanzees in Tanzania. It was a long day."
)


def nodes_by_name(graph: KnowledgeGraph) -> dict[str, tuple[str, str]]:
    return {n.name: (n.id, n.type) for n in graph.nodes}


def relations(graph: KnowledgeGraph) -> set[tuple[str, str, str]]:
    names = {n.id: n.name for n in graph.nodes}
    return {(names[e.source_node_id], e.relationship_name, names[e.target_node_id]) for e in graph.edges}


def test_names_and_types_are_found() -> None:
    found = nodes_by_name(offline_graph(STORY))
    assert found["Alice"][1] == "person"
    assert found["Acme Corp"][1] == "organization"
    assert found["Bob Smith"][1] == "person"
    assert found["Bank of England"][1] == "organization"
    assert found["Jane Goodall"][1] == "person"
    assert found["Tanzania"][1] == "place"
    assert found["1999"][1] == "date"
    assert found["March 3, 2021"][1] == "date"


def test_sentence_initial_stop_words_and_titles_are_not_entities() -> None:
    names = set(nodes_by_name(offline_graph(STORY)))
    assert not names & {"The", "She", "It", "The Bank of England", "CEO", "Dr", "Dr. Jane Goodall"}


def test_relationships_come_from_the_words_between_mentions() -> None:
    found = relations(offline_graph(STORY))
    assert ("Alice", "ceo_of", "Acme Corp") in found
    assert ("Acme Corp", "founded_in", "1999") in found
    assert ("Bank of England", "raised_rates_on", "March 3, 2021") in found


def test_long_or_empty_gaps_fall_back_to_related_to() -> None:
    graph = offline_graph(
        "Alice, who everyone agreed had spent far too many years waiting, finally met Bob. "
        "Carol and Dave left."
    )
    found = relations(graph)
    assert ("Alice", "related_to", "Bob") in found
    assert ("Carol", "related_to", "Dave") in found


def test_legal_suffix_and_short_name_are_one_node() -> None:
    graph = offline_graph("Acme Inc hired Alice. Later Acme moved to Paris.")
    assert [n.name for n in graph.nodes] == ["Acme Inc", "Alice", "Paris"]
    assert ("Acme Inc", "moved_to", "Paris") in relations(graph)


def test_edges_use_declared_nodes_and_carry_the_sentence() -> None:
    graph = offline_graph(STORY)
    ids = {n.id for n in graph.nodes}
    assert len(ids) == len(graph.nodes)
    for edge in graph.edges:
        assert {edge.source_node_id, edge.target_node_id} <= ids
        assert edge.description and edge.description in STORY


def test_summary_and_description_are_bounded() -> None:
    summary = offline_summary(STORY * 5)
    assert summary.summary.startswith("Alice is the CEO of Acme Corp.")
    assert len(summary.summary) <= 200
    assert len(summary.description) <= 100
    assert offline_summary("Short text.").summary == "Short text."


def test_output_is_deterministic_and_valid() -> None:
    first = offline_chunk_extraction(STORY)
    assert first.model_dump() == offline_chunk_extraction(STORY).model_dump()
    assert ChunkExtraction.model_validate_json(first.model_dump_json()) == first


def test_output_feeds_build_graph() -> None:
    dataset, chunk = uuid.uuid4(), uuid.uuid4()
    draft = build_graph(dataset, [(chunk, STORY)], [offline_chunk_extraction(STORY)])
    assert {e.name for e in draft.entities} >= {"Alice", "Acme Corp", "Bank of England"}
    assert any(e.relationship == "ceo_of" for e in draft.edges)


def test_empty_text_gives_an_empty_graph() -> None:
    result = offline_chunk_extraction("   ")
    assert result.graph.nodes == [] and result.graph.edges == []
    assert result.summary.summary == ""


def test_initials_stay_inside_a_name_and_end_no_sentence():
    graph = offline_chunk_extraction("Blade Runner is based on a novel by Philip K. Dick. "
                                     "Harry Potter is a series by J. K. Rowling.").graph
    names = {n.name for n in graph.nodes}
    assert {"Philip K. Dick", "J. K. Rowling"} <= names


# --- Chat transcripts: `Speaker: text` lines (issue #33) ---

# Openers seen in real chat, each in a realistic turn; none names anything.
CHAT_JUNK = [
    ("Thanks", "Thanks! That means a lot."), ("Thank you", "Thank you so much for asking."),
    ("Wow", "Wow, that sounds amazing."), ("I'm", "I'm so happy for you."),
    ("I've", "I've been thinking about it all week."), ("You're", "You're the best, honestly."),
    ("It's", "It's been forever."), ("That's", "That's so cool!"), ("Yeah", "Yeah, totally agree."),
    ("So", "So what did you end up doing?"), ("Well", "Well, it was a long day."),
    ("Honestly", "Honestly it went better than expected."), ("Anyway", "Anyway, how was work?"),
    ("Omg", "Omg that is hilarious 😂"), ("Lol", "Lol no way."), ("Haha", "Haha yes exactly."),
    ("Aww", "Aww that's adorable."), ("Yay", "Yay, so excited for this!"),
    ("Congrats", "Congrats on the new job!"), ("Sure", "Sure, sounds good."),
    ("Totally", "Totally, I get it."), ("Definitely", "Definitely going next time."),
    ("Absolutely", "Absolutely, count me in."), ("Good morning", "Good morning! Sleep well?"),
    ("Happy birthday", "Happy birthday!! Hope it's a great one 🎂"), ("Hey", "Hey! How are you?"),
    ("Oh", "Oh no, that's awful."), ("Ok", "Ok I will bring snacks."), ("Great", "Great! See you then."),
    ("Love", "Love it, so pretty."), ("Nope", "Nope, not yet."), ("Ugh", "Ugh, Mondays."),
    ("Sorry", "Sorry, missed your message."), ("Tuesday", "Tuesday works for me."),
    ("2023", "2023 was a wild year."), ("Did", "Did you get home ok?"), ("Tell", "Tell me everything!"),
    ("YES", "YES!!! finally yes"), ("NOOO", "NOOO not the cake 😭"), ("😂", "😂😂😂"),
    ("Is", "😎 Is it official yet?"), ("42", "42 days to go!"),
]


def chat(*turns: tuple[str, str]) -> str:
    return "\n".join(f"{speaker}: {text}" for speaker, text in turns)


def test_greetings_interjections_fillers_and_bare_years_are_not_entities_in_chat() -> None:
    assert len(CHAT_JUNK) >= 30
    for word, text in CHAT_JUNK:
        graph = offline_graph(chat(("Caroline", text), ("Melanie", text)))
        assert {n.name for n in graph.nodes} == {"Caroline", "Melanie"}, (word, text)


def test_a_greeting_with_a_name_keeps_only_the_name() -> None:
    graph = offline_graph(chat(("Caroline", "Hey Melanie! Good morning Tala."),
                               ("Melanie", "Happy Birthday Caroline! Thanks Jo for the cake.")))
    names = set(nodes_by_name(graph))
    assert names == {"Caroline", "Melanie", "Tala", "Jo"}


SESSIONS = [
    "1:56 pm on 8 May, 2023\n" + chat(
        ("Caroline", "Hey Melanie! Guess what, I adopted a dog named Pepper."),
        ("Melanie", "Aww congrats! I'm going to Peru next month."),
        ("Caroline", "Wow. Thanks! Have fun in Peru."),
    ),
    "Session 2 - 20 May 2023\n" + chat(
        ("Melanie", "Haha I moved to Lisbon last week."),
        ("Caroline", "So jealous. My sister works at Acme Corp in Lisbon."),
    ),
    "2023-06-02T09:15:00\n" + chat(
        ("Caroline", "Yeah Pepper loves the beach."),
        ("Melanie", "I've signed up for the Lisbon Half Marathon!"),
        ("Caroline", "You're amazing. I visited Porto in June."),
    ),
]


def test_a_conversation_has_one_participant_per_speaker_and_first_person_facts() -> None:
    found: set[tuple[str, str, str]] = set()
    for session in SESSIONS:
        graph = offline_graph(session)
        speakers = [n for n in graph.nodes if n.name in ("Caroline", "Melanie")]
        assert sorted((n.name, n.type) for n in speakers) == [("Caroline", "person"), ("Melanie", "person")]
        found |= relations(graph)
    assert ("Caroline", "adopted_dog", "Pepper") in found
    assert ("Melanie", "going_to", "Peru") in found
    assert ("Melanie", "moved_to", "Lisbon") in found
    assert ("Melanie", "signed_up_for", "Lisbon Half Marathon") in found
    assert ("Caroline", "visited", "Porto") in found
    # "My sister works at Acme Corp": the sister works there, not Caroline.
    assert ("Caroline", "related_to", "Acme Corp") in found
    assert ("Caroline", "works_at", "Acme Corp") not in found
    nodes = {n.name for session in SESSIONS for n in offline_graph(session).nodes}
    assert not nodes & {"Hey Melanie", "Guess", "I'm", "I've", "You're", "Aww", "Wow", "Haha", "So",
                        "Yeah", "My", "May", "2023", "Session", "pm"}


def test_first_person_facts_never_change_the_chunk_text() -> None:
    text = chat(("Caroline", "I adopted a dog named Pepper."), ("Melanie", "I love Pepper!"))
    graph = offline_graph(text)
    assert ("Caroline", "adopted_dog", "Pepper") in relations(graph)
    assert ("Melanie", "love", "Pepper") in relations(graph)
    for edge in graph.edges:
        speaker, said = edge.description.split(": ", 1)
        assert f"{speaker}: {said}" in text.splitlines()


def test_you_is_the_other_speaker_only_when_there_are_two() -> None:
    two = offline_graph(chat(("Caroline", "Did you visit Porto?"), ("Melanie", "Not yet.")))
    assert ("Melanie", "visit", "Porto") in relations(two)
    three = offline_graph(chat(("Caroline", "Did you visit Porto?"), ("Melanie", "Not yet."),
                               ("Jo", "Me neither."), ("Caroline", "Haha ok.")))
    assert {"Caroline", "Melanie", "Jo"} <= {n.name for n in three.nodes if n.type == "person"}
    assert not {r for r in relations(three) if r[2] == "Porto"}


def test_chat_relations_are_short_verb_phrases() -> None:
    graph = offline_graph(chat(
        ("Leah", "I chose them cause Priya said they help with blisters."),
        ("Callum", "lol thanks Ines really appreciate it. I work at Harrogate District Hospital."),
        ("Leah", "Send me the link, I'm donating to Breast Cancer Now tonight."),
        ("Callum", "Keep all your fingers please Leah. I'm moving to Leeds in September."),
    ))
    found = relations(graph)
    assert ("Callum", "work_at", "Harrogate District Hospital") in found
    assert ("Leah", "donating_to", "Breast Cancer Now") in found
    assert ("Callum", "moving_to", "Leeds") in found
    assert ("Leah", "related_to", "Priya") in found  # "I chose them cause Priya said ..."
    for _, relationship, _ in found:
        words = relationship.split("_")
        assert len(words) <= 4, relationship
    assert not {r for _, r, _ in found} & {"i_chose_them_cause", "lol_thanks_ines_really",
                                           "keep_all_your_fingers_please", "send_me_link_i_m_donating"}


def test_a_header_line_yields_no_node() -> None:
    for header in ("1:56 pm on 8 May, 2023", "Session 3 - 8 May 2023", "2023-05-08",
                   "2023-05-08T13:56:00+00:00", "Session 3, 8 May 2023, 1:56 pm"):
        assert offline_graph(header).nodes == []
        graph = offline_graph(f"{header}\n" + chat(("Caroline", "Awesome!"), ("Melanie", "Yes!")))
        assert {n.name for n in graph.nodes} == {"Caroline", "Melanie"}
        assert graph.edges == []


def test_one_long_turn_alone_is_still_a_turn_but_a_label_is_not() -> None:
    turn = offline_graph("Caroline: Honestly I moved to Lisbon because of the job.")
    assert ("Caroline", "moved_to", "Lisbon") in relations(turn)
    label = offline_graph("Note: Jaws is a 1975 film directed by Steven Spielberg.")
    assert "Note" not in {n.name for n in label.nodes if n.type == "person"}


def test_field_lines_are_no_chat() -> None:
    """Read as prose: no field label becomes a participant."""
    for text in ("Task: ship the Acme Corp report\nResult: sent to Bob Smith\nOwner: Alice",
                 "Name: Jane Goodall\nRole: primatologist in Tanzania",
                 "Alpha: first\nBeta: second\nGamma: third"):
        labels = {line.split(":")[0] for line in text.splitlines()}
        assert not {n.name for n in offline_graph(text).nodes if n.type == "person"} & labels


def test_a_sentence_opener_with_a_verb_after_it_is_a_name() -> None:
    graph = offline_graph(chat(
        ("Leah", "Carmen and I canned 24 jars of sauce last weekend."),
        ("Callum", "Juno absolutely hated the snow. Hector says hi."),
        ("Leah", "Everything is fine. Honestly is fine. Thursday was long."),
    ))
    assert {n.name for n in graph.nodes} == {"Leah", "Callum", "Carmen", "Juno", "Hector"}


def test_an_attributed_sentence_states_its_fact_and_quotes_the_source() -> None:
    sentence = "According to the records of the Hillcrest Heritage Society, Alder Bay University was founded in 1968."
    graph = offline_graph(sentence)
    assert ("Alder Bay University", "founded_in", "1968") in relations(graph)
    assert {e.description for e in graph.edges} == {sentence}


def test_a_successor_holds_the_role_not_the_one_succeeded() -> None:
    graph = offline_graph("In 2024 Bob Lindqvist succeeded Alice Moreau as CEO of Harbor Dynamics.")
    found = relations(graph)
    assert ("Bob Lindqvist", "ceo_of", "Harbor Dynamics") in found
    assert ("Bob Lindqvist", "succeeded", "Alice Moreau") in found
    assert ("Alice Moreau", "ceo_of", "Harbor Dynamics") not in found
    assert {e.valid_from for e in graph.edges} == {"2024"}


def test_offline_contradictions_are_one_time_events_dated_in_different_years() -> None:
    from engram.adapters.llm.offline import offline_contradictions
    from engram.prompts.contradiction import ContradictionList

    facts = "\n".join(["[F1] Alder Bay University founded in 1962", "[F2] Alder Bay University located in Hillcrest",
                       "[F3] Alder Bay University founded in 1968", "[F4] Greyfen Dam completed in 1983",
                       "[F5] Alice Moreau joined in 2011", "[F6] Alice Moreau joined in 2015",
                       "[F7] Greyfen Dam completed in 1983"])
    found = ContradictionList.model_validate(offline_contradictions(f"Facts:\n{facts}\n\nList the contradictions."))
    assert [(c.first_fact_id, c.second_fact_id) for c in found.contradictions] == [("F1", "F3")]
    assert "1962 or 1968" in found.contradictions[0].reason
