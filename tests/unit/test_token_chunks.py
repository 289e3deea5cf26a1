"""The chunk stage cuts long prose and long chat transcripts into chunks the local model reads
whole: every chunk fits its 256-wordpiece window with [CLS] and [SEP], and no word is lost."""

from __future__ import annotations

import json
import random
from types import SimpleNamespace

import pytest

from engram.adapters import embed
from engram.pipelines.cognify.flow import compute_chunk
from engram.settings import Settings

WORDS = ("the of and memory graph vector worker queue Postgres Celery embedding retrieval pipeline "
         "re-ranking state-of-the-art 2026-12-05 3.14159 €42,50 naïve café Zürich O'Brien e-mail "
         "co-operative multi-tenant idempotency HNSW pgvector user@example.com (parenthetical) "
         "\"quoted\" semi;colon 10x 4096-dimensional ünïcödé Tromsø").split()
NAMES = ["Alice", "Bob", "Ursula", "Marek", "Dr. Chen", "Support Bot"]


def prose(rng: random.Random) -> str:
    paragraphs = []
    for _ in range(40):
        sentences = [" ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 45))).capitalize() + "."
                     for _ in range(rng.randint(1, 9))]
        paragraphs.append(" ".join(sentences))
    paragraphs.append(" ".join(rng.choice(WORDS) for _ in range(700)))  # one sentence, no full stop
    paragraphs.append("See https://example.com/" + "/".join(f"a-b.c{i}" for i in range(200)) + " now.")
    return "\n\n".join(paragraphs)


def transcript(rng: random.Random) -> str:
    lines = []
    for turn in range(330):
        words = " ".join(rng.choice(WORDS) for _ in range(rng.choice([3, 8, 20, 60, 240])))
        end = rng.choice([".", "?", "!", ""])  # chat lines often end without punctuation
        lines.append(f"{rng.choice(NAMES)}: {words}{end}" if turn % 50 else f"[{turn // 50}:00] {words}")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def model_tokenizer():
    """The tokenizer and window sentence-transformers gives the model (not Engram's counter)."""
    from transformers import AutoTokenizer

    path = embed._model_path("all-MiniLM-L6-v2")
    window = json.loads((path / "sentence_bert_config.json").read_text())["max_seq_length"]
    return AutoTokenizer.from_pretrained(str(path)), window


@pytest.mark.parametrize("make, doc_type", [(prose, "text"), (transcript, "conversation")])
def test_every_chunk_fits_the_models_window_and_no_word_is_lost(make, doc_type, model_tokenizer):
    tokenizer, window = model_tokenizer
    text = make(random.Random(33))
    embedder = embed.LocalEmbedder()
    ctx = SimpleNamespace(settings=Settings(), ports=SimpleNamespace(embedder=lambda: embedder))
    chunks = compute_chunk({"text": text, "doc_type": doc_type}, ctx)["chunks"]
    pieces = [len(tokenizer(c["text"])["input_ids"]) for c in chunks]  # with [CLS] and [SEP]
    assert max(pieces) <= window
    assert max(pieces) > window * 0.9  # the window is used, not wasted
    assert [c["token_count"] for c in chunks] == [n - 2 for n in pieces]
    pos = 0
    for chunk in chunks:  # consecutive slices of the text, only whitespace between them
        at = text.find(chunk["text"], pos)
        assert at >= 0 and not text[pos:at].strip()
        pos = at + len(chunk["text"])
    assert not text[pos:].strip()
    assert "".join("".join(c["text"] for c in chunks).split()) == "".join(text.split())
    assert embedder._model is None  # chunking loaded the tokenizer, not the model


def test_max_chunk_tokens_below_the_window_is_the_limit(model_tokenizer):
    tokenizer, _ = model_tokenizer
    embedder = embed.LocalEmbedder()
    ctx = SimpleNamespace(settings=Settings(max_chunk_tokens=64), ports=SimpleNamespace(embedder=lambda: embedder))
    chunks = compute_chunk({"text": transcript(random.Random(7)), "doc_type": "conversation"}, ctx)["chunks"]
    assert max(len(tokenizer(c["text"], add_special_tokens=False)["input_ids"]) for c in chunks) == 64
