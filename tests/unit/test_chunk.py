"""Chunk stage: limits respected, no words lost, cuts at the best boundary available."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from engram.pipelines.cognify.chunk import ChunkDraft, chunk_budget, chunk_for_embedder, chunk_text

SENTENCE = "The quick brown fox jumps over the lazy dog."  # 9 words


def words(chunks: list[ChunkDraft]) -> list[str]:
    return " ".join(c.text for c in chunks).split()


def long_document() -> str:
    paragraphs = []
    for p in range(12):
        sentences = [f"Paragraph {p} sentence {s} has a few more words in it." for s in range(p % 5 + 1)]
        paragraphs.append(" ".join(sentences))
    paragraphs.append(" ".join(f"word{i}" for i in range(120)) + ".")  # one huge sentence
    return "\n\n".join(paragraphs)


@pytest.mark.parametrize("limit", [1, 3, 7, 10, 25, 64, 1000])
def test_chunks_respect_the_limit_and_lose_no_words(limit: int) -> None:
    text = long_document()
    chunks = chunk_text(text, limit)
    assert all(1 <= c.token_count <= limit for c in chunks)
    assert all(c.text.strip() for c in chunks)
    assert words(chunks) == text.split()
    assert [c.index for c in chunks] == list(range(len(chunks)))


def test_token_count_is_words_by_default() -> None:
    (chunk,) = chunk_text(SENTENCE, 100)
    assert chunk.token_count == 9
    assert chunk.text == SENTENCE
    assert chunk.cut_type == "end"


def test_empty_text_gives_no_chunks() -> None:
    assert chunk_text("", 10) == []
    assert chunk_text(" \n\n \n", 10) == []


def test_small_paragraphs_share_a_chunk() -> None:
    text = "First para here.\n\nSecond para here."
    chunks = chunk_text(text, 10)
    assert [c.text for c in chunks] == [text]


def test_paragraph_that_does_not_fit_moves_whole_to_next_chunk() -> None:
    first = "One two three four."
    second = "Five six. Seven eight nine ten."  # its first sentence alone would still fit
    chunks = chunk_text(f"{first}\n\n{second}", 8)
    assert [c.text for c in chunks] == [first, second]
    assert [c.cut_type for c in chunks] == ["paragraph_end", "end"]


def test_long_paragraph_is_cut_between_sentences() -> None:
    text = "Alpha beta gamma delta. Epsilon zeta eta theta. Iota kappa lambda mu."
    chunks = chunk_text(text, 8)
    assert [c.text for c in chunks] == [
        "Alpha beta gamma delta. Epsilon zeta eta theta.",
        "Iota kappa lambda mu.",
    ]
    assert chunks[0].cut_type == "sentence_end"


def test_sentence_longer_than_the_limit_is_split_on_words() -> None:
    chunks = chunk_text(SENTENCE, 4)
    assert [c.text for c in chunks] == ["The quick brown fox", "jumps over the lazy", "dog."]
    assert [c.cut_type for c in chunks] == ["sentence_cut", "sentence_cut", "end"]


def test_abbreviations_do_not_end_sentences() -> None:
    text = "Dr. Smith arrived. Mr. Jones left early today."
    chunks = chunk_text(text, 5)
    assert [c.text for c in chunks] == ["Dr. Smith arrived.", "Mr. Jones left early today."]


def test_line_breaks_inside_a_chunk_survive() -> None:
    code = "def f(x):\n    return x + 1\n\ndef g(y):\n    return y * 2"
    chunks = chunk_text(code, 100)
    assert chunks[0].text == code


def test_custom_token_counter_is_respected() -> None:
    def by_chars(s: str) -> int:
        return len(s)

    text = "Aa bb cc. Dd ee ff. Gg hh ii."
    chunks = chunk_text(text, 20, by_chars)
    assert all(c.token_count == len(c.text) <= 20 for c in chunks)
    assert words(chunks) == text.split()


def test_non_additive_counter_still_respects_the_limit() -> None:
    # Counts two tokens per sentence join, so summing per-sentence counts under-estimates.
    def joins_cost(s: str) -> int:
        return len(s.split()) + 2 * s.count(". ")

    text = "One two. Three four. Five six. Seven eight."
    chunks = chunk_text(text, 5, joins_cost)
    assert all(joins_cost(c.text) <= 5 for c in chunks)
    assert words(chunks) == text.split()


def test_chunking_is_deterministic() -> None:
    text = long_document()
    assert chunk_text(text, 17) == chunk_text(text, 17)


def test_limit_below_one_is_rejected() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        chunk_text("words", 0)


# ------------------------------------------------------------------ limits in the embedder's tokens


def per_three_chars(s: str) -> int:
    """A fake sub-word counter: every word costs one token per three characters."""
    return sum(-(-len(w) // 3) for w in s.split())


def assert_slices_cover(text: str, chunks: list[ChunkDraft]) -> None:
    """Chunks are consecutive slices of `text` with only whitespace between them."""
    pos = 0
    for chunk in chunks:
        at = text.find(chunk.text, pos)
        assert at >= 0 and not text[pos:at].strip(), f"chunk {chunk.index} is not the next slice"
        pos = at + len(chunk.text)
    assert not text[pos:].strip()


def test_a_giant_single_word_is_cut_by_characters_and_no_chunk_exceeds_the_limit() -> None:
    url = "https://example.com/" + "/".join(f"segment{i}" for i in range(60)) + "?q=" + "ab" * 300
    blob = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo" * 40
    text = f"See {url} for details. The payload was {blob} and nothing else.\n\nA short closing paragraph."
    chunks = chunk_text(text, 20, per_three_chars)
    assert all(c.token_count == per_three_chars(c.text) <= 20 for c in chunks)
    assert_slices_cover(text, chunks)
    assert "".join(c.text for c in chunks).split() != text.split()  # the giant words were cut...
    assert "".join("".join(c.text for c in chunks).split()) == "".join(text.split())  # ...losing nothing
    assert "word_cut" in {c.cut_type for c in chunks}
    assert chunks[-1].text == "A short closing paragraph."


def test_a_cut_inside_a_word_prefers_to_follow_a_punctuation_mark() -> None:
    path = "/".join(f"part{i:02d}" for i in range(30))  # 6 characters a segment, 179 in all
    (first, *_) = chunk_text(path, 10, per_three_chars)
    assert first.text.endswith("/") and first.cut_type == "word_cut"


def test_a_character_longer_than_the_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="one character"):
        chunk_text("abc defgh", 1, lambda s: 2 * len(s))


@given(st.lists(st.text(alphabet="ab .\n/-:é", min_size=1, max_size=400), min_size=1, max_size=6),
       st.integers(min_value=1, max_value=40))
@hsettings(max_examples=150, deadline=None)
def test_any_text_is_cut_within_the_limit_without_losing_a_character(parts: list[str], limit: int) -> None:
    text = "\n\n".join(parts)
    chunks = chunk_text(text, limit, per_three_chars)
    assert all(1 <= per_three_chars(c.text) <= limit for c in chunks)
    assert_slices_cover(text, chunks)
    assert "".join("".join(c.text for c in chunks).split()) == "".join(text.split())


class FakeEmbedder:
    max_tokens = 12

    def count_tokens(self, text: str) -> int:
        return per_three_chars(text)


def test_the_budget_is_the_embedders_tokens_capped_by_its_window() -> None:
    embedder = FakeEmbedder()
    assert chunk_budget(256, embedder) == (12, embedder.count_tokens)
    assert chunk_budget(9, embedder)[0] == 9
    text = " ".join(f"alphabet{i}" for i in range(50))
    assert chunk_for_embedder(text, 256, embedder) == chunk_text(text, 12, per_three_chars)
