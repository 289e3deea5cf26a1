"""The rows of bench/scale.py's deployment: ten datasets of generated text with a Zipfian
vocabulary and generated entity names, and vectors that are the real embedder's for a sample
and clustered synthetic ones for the rest. Pure (numpy, no database): tests/unit/
test_scale_bench.py runs it in milliseconds. Bench-only code: nothing in the product imports it.

- The split (`split`): one dataset of BIG_SHARE (40 %) of the chunks, the other nine share the
  rest in a geometric series of ratio DECAY (each 3/4 of the one before): at 1,000,000 chunks
  400,000 / 162,177 / 121,632 / 91,224 / 68,418 / 51,313 / 38,485 / 28,864 / 21,648 / 16,239 (the
  last takes what rounding leaves, so the sizes add up exactly).
- The vocabulary (`Vocabulary`): the words of the bench corpora (bench/corpus) ranked by their
  frequency there, then generated pseudo-words (`pseudo_word`) up to VOCABULARY words; a word
  is drawn by Zipf-Mandelbrot rank frequency p(r) ~ 1 / (r + ZIPF_Q)^ZIPF_S, the law real text
  follows, so the BM25 postings have a real head (stop-word-like terms in most chunks) and a
  long tail.
- Topics: each dataset has TOPICS topics, each TOPIC_WORDS words drawn from the vocabulary
  below its first 200 ranks; a document keeps one topic and a word of its sentences comes
  from it with probability TOPIC_SHARE, so chunks cluster in vector space as real ones do.
- Entities (`entity_name`): person and organisation names from syllables, ENTITIES_PER_CHUNK
  of them per dataset chunk, mentioned with Zipfian popularity in ENTITY_SHARE of the sentences
  (they go into the text and its postings; no entity or edge rows are written).
- Vectors (`Synthesizer`): the real sample's vectors are the embedder's. For each sample
  vector its cosine distance to its nearest other sample vector is measured; a synthetic
  vector is a sample vector c of its own dataset and topic (its "centre") moved by a noise
  vector orthogonal to c of norm s = sqrt(1/(1-d)^2 - 1), d drawn from that measured
  distribution, then normalised: its cosine distance to c is exactly d, and since noise in
  384 dimensions is near-orthogonal to every other sample and sibling, its nearest neighbour is
  its centre at d (else, rarely, a sibling at about that distance): synthetic nearest-neighbour
  distances follow the real ones (tests/unit/test_scale_bench.py checks median and 90th
  percentile). The centres are the sample chunks of the synthetic chunk's dataset and topic.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

BIG_SHARE, DECAY, DATASETS = 0.4, 0.75, 10
VOCABULARY, ZIPF_S, ZIPF_Q = 60_000, 1.07, 2.7
TOPICS, TOPIC_WORDS, TOPIC_SHARE = 64, 150, 0.35
ENTITIES_PER_CHUNK, ENTITY_SHARE = 0.05, 0.3
_SYLLABLES = ("ka", "ro", "mi", "tel", "van", "sor", "lin", "dra", "bel", "no", "quin", "zar", "mo", "ve", "tha",
              "ly", "gor", "an", "es", "ur", "pel", "dri", "sa", "ko", "ren", "ith", "ul", "ba", "dor", "ce")
_ORG = ("Labs", "Systems", "Group", "Partners", "Institute", "Foundation", "Works", "Holdings", "Collective")


def split(total: int, datasets: int = DATASETS, big: float = BIG_SHARE, decay: float = DECAY) -> list[int]:
    """Chunks per dataset: the first `big` of the total, the rest in a geometric series."""
    if datasets < 1 or total < datasets:
        raise ValueError(f"need at least one chunk per dataset: {total} chunks over {datasets} datasets")
    if datasets == 1:
        return [total]
    first = max(1, round(total * big))
    rest = total - first
    weights = [decay ** i for i in range(datasets - 1)]
    sizes = [max(1, int(rest * w / sum(weights))) for w in weights]
    sizes[-1] = rest - sum(sizes[:-1])
    if sizes[-1] < 1:
        raise ValueError(f"{total} chunks are too few for {datasets} datasets")
    return [first, *sizes]


def pseudo_word(n: int) -> str:
    """The n-th generated word: 2-4 syllables, distinct for distinct n."""
    out, k = [], n + len(_SYLLABLES) ** 2  # every word at least two syllables long
    while k:
        k, r = divmod(k, len(_SYLLABLES))
        out.append(_SYLLABLES[r])
    return "".join(out)


def entity_name(rng: np.random.Generator) -> str:
    def part() -> str:
        return "".join(_SYLLABLES[i] for i in rng.integers(0, len(_SYLLABLES), rng.integers(2, 4))).capitalize()
    if rng.random() < 0.7:
        return f"{part()} {part()}"
    return f"{part()} {_ORG[rng.integers(0, len(_ORG))]}"


def zipf_probabilities(n: int, s: float = ZIPF_S, q: float = ZIPF_Q) -> np.ndarray:
    p = 1.0 / (np.arange(1, n + 1) + q) ** s
    return p / p.sum()


class Vocabulary:
    """Words ranked by frequency (the corpus words first) and a Zipfian sampler over the ranks."""

    def __init__(self, corpus_words: list[str], size: int = VOCABULARY):
        ranked = [w for w, _ in Counter(corpus_words).most_common()][:size]
        seen, n = set(ranked), 0
        while len(ranked) < size:
            word = pseudo_word(n)
            n += 1
            if word not in seen:
                ranked.append(word)
                seen.add(word)
        self.words = np.asarray(ranked, dtype=object)
        self.cumulative = np.cumsum(zipf_probabilities(size))

    @staticmethod
    def from_text(texts: list[str], size: int = VOCABULARY) -> Vocabulary:
        return Vocabulary([w for t in texts for w in re.findall(r"[a-z]+", t.lower())], size)

    def ranks(self, rng: np.random.Generator, n: int) -> np.ndarray:
        return np.minimum(np.searchsorted(self.cumulative, rng.random(n)), len(self.words) - 1)


@dataclass
class Topic:
    words: np.ndarray


class TextGenerator:
    """Sentences, chunks and questions of one dataset, deterministic for its seed."""

    def __init__(self, vocabulary: Vocabulary, chunks: int, seed: int):
        self.vocab, self.rng = vocabulary, np.random.default_rng(seed)
        tail = np.arange(min(200, len(vocabulary.words) - 1), len(vocabulary.words))
        self.topics = [Topic(vocabulary.words[self.rng.choice(tail, TOPIC_WORDS)]) for _ in range(TOPICS)]
        self.entities = [entity_name(self.rng) for _ in range(max(10, int(chunks * ENTITIES_PER_CHUNK)))]
        self.entity_cumulative = np.cumsum(zipf_probabilities(len(self.entities), 1.0, 1.0))

    def entity(self) -> str:
        return self.entities[min(int(np.searchsorted(self.entity_cumulative, self.rng.random())),
                                 len(self.entities) - 1)]

    def sentence(self, topic: int) -> str:
        n = int(self.rng.integers(8, 21))
        words = list(self.vocab.words[self.vocab.ranks(self.rng, n)])
        own = self.rng.random(n) < TOPIC_SHARE
        picks = self.topics[topic].words[self.rng.integers(0, TOPIC_WORDS, int(own.sum()))]
        for i, word in zip(np.flatnonzero(own), picks):
            words[i] = word
        if self.rng.random() < ENTITY_SHARE:
            words.insert(int(self.rng.integers(0, n)), self.entity())
        text = " ".join(words)
        return text[0].upper() + text[1:] + "."

    def chunk(self, topic: int, limit: int, count) -> tuple[str, int]:
        """3-6 sentences of the topic, fewer if the embedder's window (`limit` tokens) is passed."""
        lines = [self.sentence(topic) for _ in range(int(self.rng.integers(3, 7)))]
        while True:
            text = " ".join(lines)
            tokens = count(text)
            if tokens <= limit or len(lines) == 1:
                return text, tokens
            lines.pop()

def question(text: str, rng: np.random.Generator) -> str:
    """A question about a chunk: an entity it names (capitalised words inside a sentence), if
    any, and up to four of its longer (rarer) words."""
    named = re.search(r"(?<=[a-z] )([A-Z][a-z]+ [A-Z][a-z]+)", text)
    words = sorted({w.strip(".").lower() for w in text.split()}, key=lambda w: (-len(w), w))[:12]
    picked = [words[i] for i in rng.choice(len(words), min(4, len(words)), replace=False)]
    about = f"{named.group(1)} and " if named else ""
    return f"What do we know about {about}{' '.join(picked)}?"


# ------------------------------------------------------------------ synthetic vectors


def nearest_distances(matrix: np.ndarray, probes: int, rng: np.random.Generator, block: int = 512) -> np.ndarray:
    """Cosine distance of (up to `probes`) unit rows to their nearest other row of `matrix`."""
    rows = rng.choice(len(matrix), min(probes, len(matrix)), replace=False) if len(matrix) > probes else \
        np.arange(len(matrix))
    out = []
    for start in range(0, len(rows), block):
        chosen = rows[start:start + block]
        sims = matrix[chosen] @ matrix.T
        sims[np.arange(len(chosen)), chosen] = -np.inf  # not itself
        out.append(1.0 - sims.max(axis=1))
    return np.clip(np.concatenate(out), 0.0, 1.0)


def around(centre: np.ndarray, distance: float, rng: np.random.Generator) -> np.ndarray:
    """A unit vector at exactly cosine distance `distance` (< 1) from the unit vector `centre`."""
    noise = rng.standard_normal(centre.shape[0]).astype(np.float64)
    noise -= (noise @ centre) * centre
    s = np.sqrt(1.0 / (1.0 - distance) ** 2 - 1.0)
    v = centre + noise * (s / np.linalg.norm(noise))
    return (v / np.linalg.norm(v)).astype(np.float32)


class Synthesizer:
    """Synthetic vectors around a dataset's real ones, nearest-neighbour distances as measured."""

    def __init__(self, real: np.ndarray, probes: int = 2000, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.real = real / np.linalg.norm(real, axis=1, keepdims=True)
        self.distances = nearest_distances(self.real, probes, self.rng) if len(real) > 1 else np.array([0.2])
        self.distances = np.minimum(self.distances, 0.95)

    def vector(self, centres: list[int]) -> np.ndarray:
        """Around one of `centres` (row numbers of the real matrix), chosen at random."""
        centre = self.real[centres[int(self.rng.integers(0, len(centres)))]]
        return around(centre, float(self.distances[self.rng.integers(0, len(self.distances))]), self.rng)


# ------------------------------------------------------------------ generator checks (bench/hnsw_study.py)


def local_dimension(matrix: np.ndarray, probes: int, rng: np.random.Generator, k: int = 20) -> float:
    """Median local intrinsic dimension of unit rows (Levina-Bickel maximum likelihood over each
    probe's k nearest other rows, chord distances): how many directions the data spreads in
    around a point. Isotropic noise in 384 dimensions has a high one; real embeddings a lower one."""
    rows = rng.choice(len(matrix), min(probes, len(matrix)), replace=False)
    sims = matrix[rows] @ matrix.T
    sims[np.arange(len(rows)), rows] = -np.inf
    near = np.sort(sims, axis=1)[:, ::-1][:, :k]
    chord = np.sqrt(np.maximum(2.0 - 2.0 * near, 1e-12))
    return float(np.median(-1.0 / np.mean(np.log(chord[:, :-1] / chord[:, -1:]), axis=1)))


class GaussianTopics:
    """A second generator, to tell the data's part in HNSW's recall from the index's: each topic's
    real vectors' mean and covariance (its `rank` principal directions with their variances, an
    isotropic remainder with the rest), sampled and normalised. No synthetic vector sits on a shell
    around a real one: real and synthetic vectors of a topic come from one distribution."""

    def __init__(self, real: np.ndarray, topics: list[int], rank: int = 32, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        real = real / np.linalg.norm(real, axis=1, keepdims=True)
        self.topics: dict[int, tuple] = {}
        for topic in sorted(set(topics)):
            rows = real[[i for i, t in enumerate(topics) if t == topic]]
            mean, centred = rows.mean(axis=0), rows - rows.mean(axis=0)
            _, s, vt = np.linalg.svd(centred, full_matrices=False)
            k, dof = min(rank, len(s)), max(1, len(rows) - 1)
            rest = centred - (centred @ vt[:k].T) @ vt[:k]
            self.topics[topic] = (mean, s[:k] / np.sqrt(dof), vt[:k], np.sqrt((rest ** 2).sum() / dof / real.shape[1]))

    def vectors(self, topic: int, n: int) -> np.ndarray:
        mean, sd, basis, rest = self.topics[topic]
        z = mean + (self.rng.standard_normal((n, len(sd))) * sd) @ basis + self.rng.standard_normal((n, len(mean))) * rest
        return (z / np.linalg.norm(z, axis=1, keepdims=True)).astype(np.float32)
