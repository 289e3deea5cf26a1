"""Okapi BM25 terms: the one tokenizer used both when a chunk is loaded (its postings) and when
a question is scored, so both sides agree. Pure.

Tokens follow the common BM25 convention (scikit-learn / bm25s): lower-case `\\w\\w+` words,
a short English stop list removed, Snowball English stems. Scoring (in the store, over the
postings written in the load transaction) is Lucene's BM25:
idf = ln(1 + (N - df + 0.5) / (df + 0.5)), tf part = tf / (tf + k1·(1 - b + b·dl/avgdl)).
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

import Stemmer

_TOKEN = re.compile(r"(?u)\b\w\w+\b")
# The classic English stop list (Lucene / bm25s): only words that carry no topic.
STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there"
    " these they this to was will with".split()
)
_STEMMER = Stemmer.Stemmer("english")


@lru_cache(maxsize=200_000)
def _stem(word: str) -> str:
    return _STEMMER.stemWord(word)


def terms(text: str) -> list[str]:
    """The BM25 terms of a text, in order (repeats kept: they are term frequency)."""
    return [_stem(w) for w in _TOKEN.findall(text.lower()) if w not in STOPWORDS]


def postings(text: str) -> tuple[dict[str, int], int]:
    """(term -> frequency, document length in terms) of one chunk."""
    found = terms(text)
    return dict(Counter(found)), len(found)


def query_terms(question: str) -> dict[str, int]:
    """Distinct terms of a question with their counts (OR-ed: any term may match). A word whose
    stem is a stop word ("its" -> "it", "being" -> "be") is dropped too: the stem's postings are
    as common as the stop word's (stored chunks keep such stems: their lengths stay as loaded)."""
    return dict(Counter(t for t in terms(question) if t not in STOPWORDS))
