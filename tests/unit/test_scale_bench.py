"""bench/scale.py's pure parts (bench/scale_rows.py): the dataset split, the Zipfian vocabulary
and text generator, and synthetic vectors whose nearest-neighbour distances are the real ones'."""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import scale_rows  # noqa: E402 - bench/ is not a package


def test_the_split_is_one_dataset_of_40_percent_and_nine_decreasing():
    sizes = scale_rows.split(1_000_000)
    assert len(sizes) == 10 and sum(sizes) == 1_000_000 and sizes[0] == 400_000
    assert all(a > b for a, b in zip(sizes[1:], sizes[2:]))
    assert sizes[1] < sizes[0] and sizes[-1] >= 1
    small = scale_rows.split(50)
    assert sum(small) == 50 and all(s >= 1 for s in small) and small[0] == 20


def test_too_few_chunks_for_the_datasets_is_a_clear_error():
    with pytest.raises(ValueError, match="at least one chunk per dataset"):
        scale_rows.split(5)


def test_word_frequencies_fall_as_a_power_of_their_rank():
    vocab = scale_rows.Vocabulary.from_text(["the cat sat on the mat with the hat"], size=5_000)
    assert vocab.words[0] == "the" and len(set(vocab.words)) == 5_000  # corpus words first, pseudo-words distinct
    counts = np.bincount(vocab.ranks(np.random.default_rng(1), 200_000), minlength=5_000)
    assert counts[0] > counts[9] > counts[99] > counts[999]
    # Zipf with s ~ 1: ten times the rank, about a tenth of the draws.
    slope = np.polyfit(np.log(np.arange(10, 1000) + scale_rows.ZIPF_Q), np.log(counts[9:999] + 1), 1)[0]
    assert -1.25 < slope < -0.85


def test_generated_chunks_fit_the_window_and_name_entities():
    vocab = scale_rows.Vocabulary.from_text(["a plain sentence of words"], size=2_000)
    gen = scale_rows.TextGenerator(vocab, 2_000, seed=3)
    words = lambda text: len(text.split())  # noqa: E731 - a token counter for the test
    chunks = [gen.chunk(t % 4, 60, words) for t in range(200)]
    assert all(tokens == words(text) and (tokens <= 60 or text.count(".") == 1) for text, tokens in chunks)
    named = sum(1 for text, _ in chunks if any(e in text for e in gen.entities))
    assert named > 100  # 30 % of 3-6 sentences: most chunks name an entity
    popular = Counter(e for text, _ in chunks for e in gen.entities if e in text).most_common()
    assert popular[0][1] > 3 * popular[-1][1]  # a few entities are mentioned often
    asked = scale_rows.question(chunks[0][0], np.random.default_rng(0))
    assert asked.startswith("What do we know about") and asked.endswith("?")
    assert any(w in chunks[0][0].lower() for w in re.findall(r"[a-z]{6,}", asked))


def test_synthetic_vectors_keep_the_real_nearest_neighbour_distances():
    rng = np.random.default_rng(5)
    centres = rng.standard_normal((20, 384))
    real = np.vstack([c + 0.3 * rng.standard_normal((15, 384)) for c in centres]).astype(np.float32)
    synth = scale_rows.Synthesizer(real, probes=300, seed=1)
    unit = synth.real
    # Each synthetic vector sits at a distance drawn from the real NN distances, from its centre.
    made = np.vstack([synth.vector([7]) for _ in range(400)])
    assert np.allclose(np.linalg.norm(made, axis=1), 1.0, atol=1e-5)
    to_centre = 1.0 - made @ unit[7]
    assert abs(np.median(to_centre) - np.median(synth.distances)) < 0.03
    # Against the real vectors and their siblings, the nearest neighbour is the centre.
    sims = made @ np.vstack([unit, made]).T
    sims[np.arange(400), len(unit) + np.arange(400)] = -np.inf
    assert (sims.argmax(axis=1) == 7).mean() > 0.8  # else a sibling, at about the same distance
    real_nn = scale_rows.nearest_distances(unit, 300, np.random.default_rng(0))
    made_nn = 1.0 - sims.max(axis=1)
    assert abs(np.percentile(made_nn, 50) - np.percentile(real_nn, 50)) < 0.03
    assert abs(np.percentile(made_nn, 90) - np.percentile(real_nn, 90)) < 0.05


def test_around_is_exactly_at_the_distance():
    rng = np.random.default_rng(2)
    centre = rng.standard_normal(384)
    centre /= np.linalg.norm(centre)
    for d in (0.01, 0.2, 0.6):
        assert abs((1.0 - scale_rows.around(centre, d, rng) @ centre) - d) < 1e-4


def test_the_1m_estimate_scales_each_phase_by_its_own_size():
    import scale_measure

    figures = {"chunks": 10_000, "real_sample": 1_000, "storage": {"database_bytes_per_chunk": 12_000.0},
               "deployment": {"phases": {"embed_sample": 100.0, "nearest_distances": 2.0, "copy": 30.0,
                                         "hnsw_build": 10.0}}}
    e = scale_measure.estimate(figures, 1_000_000, 20_000)
    assert e["seconds"]["embed_sample"] == 2_000 and e["seconds"]["nearest_distances"] == 2
    assert e["seconds"]["copy"] == 3_000 and e["seconds"]["hnsw_build"] == 1_500  # 100 x log(1e6)/log(1e4)
    assert e["database_gb"] == 12.0 and e["hours"] == round(6_502 / 3600, 2)


def test_recall_within_counts_a_tie_with_the_kth_distance_but_not_a_farther_chunk():
    from scale_measure import recall_at, recall_within

    exact_ids, exact_scores = [["a", "b", "c"]], [[0.9, 0.8, 0.7]]
    # "d" is as near as the exact 3rd ("c"), within 1e-3; "e" is farther
    assert recall_at([["a", "b", "d"]], exact_ids, 3) == round(2 / 3, 4)
    assert recall_within([[0.9, 0.8, 0.7005]], exact_scores, 3) == 1.0
    assert recall_within([[0.9, 0.8, 0.69]], exact_scores, 3) == round(2 / 3, 4)
    assert recall_within([[0.9]], exact_scores, 3) == round(1 / 3, 4)  # a short answer misses the rest


def test_local_dimension_tells_a_flat_cloud_from_isotropic_noise():
    rng = np.random.default_rng(3)
    flat = rng.standard_normal((3000, 6)) @ rng.standard_normal((6, 384)) + 40 * np.eye(384)[0]
    noise = rng.standard_normal((3000, 384)) + 40 * np.eye(384)[0]
    flat, noise = (m / np.linalg.norm(m, axis=1, keepdims=True) for m in (flat, noise))
    low = scale_rows.local_dimension(flat, 300, rng)
    high = scale_rows.local_dimension(noise, 300, rng)
    assert 3 < low < 10 and high > 60


def test_the_gaussian_generator_keeps_each_topics_mean_and_spread():
    rng = np.random.default_rng(4)
    centres = rng.standard_normal((2, 384))
    real = np.vstack([c + 0.3 * rng.standard_normal((200, 384)) for c in centres])
    real /= np.linalg.norm(real, axis=1, keepdims=True)
    topics = [0] * 200 + [1] * 200
    gen = scale_rows.GaussianTopics(real, topics, rank=16, seed=1)
    for topic in (0, 1):
        made = gen.vectors(topic, 2000)
        assert made.shape == (2000, 384) and np.allclose(np.linalg.norm(made, axis=1), 1, atol=1e-5)
        mine = real[np.array(topics) == topic]
        # the same mean direction, about the same spread around it; the other topic is far
        assert made.mean(0) @ mine.mean(0) / np.linalg.norm(made.mean(0)) / np.linalg.norm(mine.mean(0)) > 0.99
        spread = lambda m: float(np.mean(1 - m @ (m.mean(0) / np.linalg.norm(m.mean(0)))))  # noqa: E731
        assert abs(spread(made) - spread(mine)) < 0.2 * spread(mine)
        other = real[np.array(topics) != topic].mean(0)
        assert made.mean(0) @ other / np.linalg.norm(made.mean(0)) / np.linalg.norm(other) < 0.9


def test_the_bench_tries_an_ef_search_through_the_products_own_setting(monkeypatch):
    import scale_measure

    from engram.settings import get_settings

    monkeypatch.setenv("ENGRAM_VECTOR_EF_SEARCH", "120")
    with scale_measure.ef_search(400):  # each unit of work's vector reads take it from the settings
        assert get_settings().vector_ef_search == 400
    assert get_settings().vector_ef_search == 120  # the setting as it was
