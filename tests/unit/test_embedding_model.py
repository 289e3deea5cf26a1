"""ENGRAM_EMBEDDING_MODEL=local:<name> loads that model or is refused, never silently another."""

from __future__ import annotations

import pytest

from engram.adapters import embed
from engram.settings import Settings


@pytest.mark.parametrize("name", ["local:all-MiniLM-L6-v2", "local:sentence-transformers/all-minilm-l6-v2"])
def test_the_shipped_model_is_loaded_under_its_own_name(name):
    embedder = embed.get_embedder(Settings(embedding_model=name, embedding_dimension=384))
    assert isinstance(embedder, embed.LocalEmbedder)
    assert (embedder.name, embedder.dimension) == ("local:all-MiniLM-L6-v2", 384)


def test_an_unknown_local_model_is_refused_with_what_ships():
    with pytest.raises(embed.EmbedderError, match=r"local:bge-small-en: no such local model; Engram ships "
                                                  r"local:all-MiniLM-L6-v2"):
        embed.get_embedder(Settings(embedding_model="local:bge-small-en", embedding_dimension=384))


def test_every_process_refuses_an_unknown_local_model_at_start():
    from engram.celery_app import check_config

    with pytest.raises(ValueError, match="no such local model"):
        check_config(Settings(embedding_model="local:e5-large"))
    check_config(Settings(embedding_model="openai/text-embedding-3-small", embedding_dimension=1536))


def test_the_local_window_and_counter_are_the_models_own_without_loading_it():
    from transformers import AutoTokenizer

    embedder = embed.get_embedder(Settings())
    model_tokenizer = AutoTokenizer.from_pretrained(str(embed._model_path("all-MiniLM-L6-v2")))
    assert embedder.max_tokens == 256 - 2  # max_seq_length less [CLS] and [SEP]
    for text in ["Héllo wörld, naïve café!", "https://example.com/a-b/c?d=e&f=g", "Ursula: ok\nMarek: 12,5 km"]:
        assert embedder.count_tokens(text) == len(model_tokenizer(text, add_special_tokens=False)["input_ids"])
    assert embedder._model is None  # the chunk stage's counts load the tokenizer alone


def test_a_litellm_window_comes_from_its_model_map_or_the_setting():
    known = embed.get_embedder(Settings(embedding_model="openai/text-embedding-3-small", embedding_dimension=1536))
    assert known.max_tokens == 8191
    assert known.count_tokens("hello world") == 2
    configured = Settings(embedding_model="acme/embed-small", embedding_dimension=1536, embedding_max_tokens=512)
    assert embed.get_embedder(configured).max_tokens == 512


def test_an_unknown_litellm_window_is_refused_with_the_setting_to_use():
    unknown = Settings(embedding_model="acme/embed-small", embedding_dimension=1536)
    with pytest.raises(embed.EmbedderError, match="input limit of embedding model acme/embed-small is unknown to "
                                                  "litellm: set ENGRAM_EMBEDDING_MAX_TOKENS"):
        _ = embed.get_embedder(unknown).max_tokens
