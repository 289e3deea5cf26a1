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
