"""The dense side of fusion embeds the question without the words nearly every searched chunk
holds (a two-person chat's participant names), by the BM25 list's own N and df."""

from __future__ import annotations

import uuid

from engram.pipelines.recall import lanes
from engram.pipelines.recall.context import RecallContext, Scope
from engram.pipelines.recall.shared_words import MIN_CHUNKS, without_shared_words

N = 40
CHAT = {"leah": 40, "callum": 39, "role": 3, "autumn": 2, "new": 12}  # df of each term in N chunks


def test_words_every_chunk_holds_are_left_out_with_their_possessive():
    assert without_shared_words("What new role did Leah get in the autumn?", N, CHAT) == \
        "What new role did get in the autumn?"
    assert without_shared_words("Where is Callum's workshop, Leah?", N, CHAT) == "Where is workshop, ?"


def test_the_question_stays_whole_when_no_word_is_shared_or_the_statistics_are_thin():
    prose = {"director": 30, "jaws": 4}
    assert without_shared_words("Who is the director of Jaws?", 840, prose) == "Who is the director of Jaws?"
    assert without_shared_words("What did Leah get?", MIN_CHUNKS - 1, {"leah": MIN_CHUNKS - 1}) == \
        "What did Leah get?"
    assert without_shared_words("What did Leah get?", N, {}) == "What did Leah get?"


def test_the_question_stays_whole_when_only_stop_words_would_be_left():
    assert without_shared_words("Leah and Callum?", N, CHAT) == "Leah and Callum?"


class Embedder:
    def __init__(self):
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts += texts
        return [[float(len(t)), 1.0] for t in texts]


class Search:
    """Three chat chunks; BM25's statistics say every chunk holds "leah"."""

    def __init__(self, df: dict[str, int]):
        self.ids = [uuid.uuid4() for _ in range(3)]
        self.df = df
        self.vectors: list[list[float]] = []

    def _row(self, n: int, **extra) -> dict:
        return {"id": self.ids[n], "text": f"Leah: chunk {n}", "importance": 0.5, **extra}

    def chunks_bm25(self, datasets, terms, k, k1, b):
        return [self._row(n, rank=3.0 - n, bm25_stats=(N, 10.0, self.df)) for n in range(3)]

    def chunks_by_vector(self, datasets, vector, k):
        self.vectors.append(vector)
        return [self._row(n, distance=0.1 * (n + 1)) for n in reversed(range(3))]

    def chunk_scores(self, datasets, ids, vector, terms, k1, b, stats=None):
        self.vectors.append(vector)
        return {}

    def chunks_by_ids(self, ids):
        return {}


def _fuse(question: str, df: dict[str, int]) -> tuple[Embedder, Search, list]:
    embedder, search = Embedder(), Search(df)
    ctx = RecallContext(question, 3, Scope([uuid.uuid4()], {}), search, embedder)
    return embedder, search, lanes.fused_rows(ctx, {"dense": 1.0, "bm25": 1.0})


def test_fusion_embeds_the_question_without_the_shared_name_for_the_dense_list():
    embedder, search, fused = _fuse("What new role did Leah get?", CHAT)
    assert embedder.texts == ["What new role did get?"]
    assert search.vectors and all(v == [float(len("What new role did get?")), 1.0] for v in search.vectors)
    assert len(fused) == 3


def test_fusion_embeds_the_question_itself_when_no_word_is_shared():
    embedder, search, _ = _fuse("What new role did Leah get?", {"leah": 5, "role": 3})
    assert embedder.texts == ["What new role did Leah get?"]
