"""The question the dense lane embeds: without the words (nearly) every searched passage shares.

In a conversation between two people each participant's name is in every chunk (its turns open
with "Name:"), so "What did Leah get in the autumn?" gains nothing from "Leah" in BM25 (its idf is
~0), yet the name pulls the question's vector toward the turns that say or greet it ("Leah!! Is
that you?") rather than toward the exchange asked about. The rule is corpus statistics, not a
word list: a question word whose BM25 term is in at least SHARED of the searched chunks (the
lexical list's own N and df, read in the same recall) is left out of the text the dense side
embeds. Prose rarely has such a word outside the stop list (the bench's knowledge base, HotpotQA,
natural and templated sets: none), so their queries are unchanged. Pure.

Measured on the bench's conversations (bench/RESULTS.md, 2026-12-05 20:00 UTC): default route
evidence recall@5 .787 -> .801, @10 .886 -> .891; the words left out were the participants'
names, the same ones at shares of .8, .9 and .95.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from engram.pipelines.recall.lexical import terms

SHARED = 0.9  # share of the searched chunks a word is in, at or above which it discriminates nothing
MIN_CHUNKS = 20  # below this many chunks a share says little (every word of a 2-chunk dataset is "shared")
_WORD = re.compile(r"(?u)\b\w\w+\b(?:['\u2019]s\b)?")  # the lexical tokens, with a possessive 's


def without_shared_words(question: str, n: float, df: Mapping[str, float]) -> str:
    """`question` without the words whose term is in at least SHARED of `n` chunks (`df`: the
    chunks holding each term); the question itself when none is, when the datasets hold fewer
    than MIN_CHUNKS chunks, or when nothing but stop words would be left."""
    if n < MIN_CHUNKS or not df:
        return question

    def shared(word: str) -> bool:
        found = terms(word.split("'")[0].split("\u2019")[0])
        return bool(found) and all(df.get(t, 0) >= SHARED * n for t in found)

    kept = _WORD.sub(lambda m: "" if shared(m.group(0)) else m.group(0), question)
    kept = " ".join(kept.split())
    if kept == " ".join(question.split()) or not terms(kept):
        return question
    return kept
