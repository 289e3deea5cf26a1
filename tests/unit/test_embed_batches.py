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


def test_short_texts_of_slightly_different_lengths_share_one_forward():
    # Padding 40 names of 9 tokens to 10 costs less than a second forward pass.
    lengths = [9, 10] * 20
    batches = length_batches(["t"] * 40, max_batch=64, lengths=lengths)
    assert len(batches) == 1


def test_batches_minimise_padded_tokens_plus_forward_cost():
    # 20 texts of 10 tokens and 20 of 100: one batch would pad all 40 to 100 tokens (4,000
    # token rows); two batches cost 200 + 2,000 plus two forwards.
    lengths = [10] * 20 + [100] * 20
    batches = length_batches(["t"] * 40, max_batch=64, lengths=lengths)
    assert sorted(sorted(b) for b in batches) == [list(range(20)), list(range(20, 40))]
