from engram.adapters.embed import length_batches


def test_every_text_is_in_exactly_one_batch():
    texts = ["x" * n for n in (5, 900, 40, 40, 1200, 3, 60)]
    batches = length_batches(texts, max_batch=3)
    assert sorted(i for b in batches for i in b) == list(range(len(texts)))
    assert all(len(b) <= 3 for b in batches)


def test_a_long_text_does_not_share_a_batch_with_many_short_ones():
    texts = ["word " * 300] + ["a short edge text"] * 60
    batches = length_batches(texts, max_batch=64, token_budget=4096)
    long_batch = next(b for b in batches if 0 in b)
    # 256 tokens a row: at most 16 rows fit the budget, so the 60 short texts go elsewhere.
    assert len(long_batch) <= 16
    assert len(batches) >= 2
