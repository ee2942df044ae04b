"""RankedLists shared between the metrics of one evaluation, and the top-k views (head)."""

from __future__ import annotations

import gc

import numpy as np
import pandas as pd
import pytest

import scorebench
from scorebench.metrics.ranking import _lists, extract_ranking
from scorebench.metrics.ranking._lists import RankedLists


def _inputs(seed: int = 0, n_q: int = 30):
    rng = np.random.default_rng(seed)
    rows = [(f"q{q}", f"d{d}", float(rng.normal())) for q in range(n_q) for d in range(int(rng.integers(0, 25)))]
    run = pd.DataFrame(rows, columns=["qid", "docid", "score"])
    judged = run.sample(frac=0.7, random_state=seed)[["qid", "docid"]]
    qrels = judged.assign(relevance=rng.integers(-1, 4, len(judged)))
    extra = pd.DataFrame({"qid": [f"q{q}" for q in range(n_q)], "docid": "unretrieved", "relevance": 2})
    return extract_ranking(run, qrels=pd.concat([qrels, extra], ignore_index=True))


def test_from_arrays_shares_the_lists_of_the_same_arrays() -> None:
    inputs = _inputs()
    first = RankedLists.from_arrays(inputs.merged())
    assert RankedLists.from_arrays(inputs.merged()) is first  # a new mapping of the same arrays
    moved = {**inputs.merged(), "n_ret": inputs.arrays["n_ret"].copy()}
    assert RankedLists.from_arrays(moved) is not first  # another array: built again
    changed = {**inputs.merged(), "relevance_level": 2.0}
    assert RankedLists.from_arrays(changed).relevance_level == 2.0
    taken = inputs.take(np.arange(inputs.n)[::-1])
    assert RankedLists.from_arrays(taken) is not first


def test_shared_lists_are_dropped_with_their_arrays() -> None:
    inputs = _inputs(1)
    RankedLists.from_arrays(inputs.merged())
    key = id(inputs.arrays["start"])
    assert key in _lists._SHARED._entries
    del inputs
    gc.collect()
    assert key not in _lists._SHARED._entries


def test_shared_lists_keep_a_few_entries_only() -> None:
    kept = [_inputs(s, 5) for s in range(_lists._SHARED.size + 3)]
    for inputs in kept:
        RankedLists.from_arrays(inputs.merged())
    assert len(_lists._SHARED._entries) <= _lists._SHARED.size


def test_non_array_inputs_are_not_shared() -> None:
    merged = {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in _inputs(2).merged().items()}
    assert RankedLists.from_arrays(merged) is not RankedLists.from_arrays(merged)


@pytest.mark.parametrize("k", [1, 3, 10, 24, 100])
def test_head_equals_the_cut_lists(k: int) -> None:
    lists = RankedLists.from_arrays(_inputs(3).merged())
    head = lists.head(k)
    assert lists.head(k) is head  # built once per k
    np.testing.assert_array_equal(head.n_ret, np.minimum(lists.n_ret, k))
    np.testing.assert_array_equal(head.rel, lists.rel[lists.pos < k])
    np.testing.assert_array_equal(head.pos, lists.pos[lists.pos < k])
    np.testing.assert_array_equal(head.rel_cum, lists.rel_cum[lists.pos < k])
    assert lists.head(None) is lists


@pytest.mark.parametrize("name", ["ndcg@k", "dcg@k", "map@k", "p@k", "r@k", "success@k", "err@k"])
def test_cut_off_metrics_equal_their_array_form(name: str) -> None:
    # the table path reads the shared head(k); the array path cuts nothing
    inputs = _inputs(4)
    lists = RankedLists.from_arrays(inputs.merged())
    ranked = [lists.rel[o:o + n] for o, n in zip(lists.offsets, lists.n_ret)]
    judged = [lists.judged[o:o + n] for o, n in zip(lists.judged_offsets, lists.judged_count)]
    for k in (1, 5, 50):
        metric = scorebench.metric(name.replace("@k", f"@{k}"))
        table = metric.compute(inputs.merged())
        arrays = metric.fn(ranked, judged, k=k) if name != "err@k" else \
            metric.fn(ranked, judged, k=k, max_grade=lists.max_relevance)
        np.testing.assert_allclose(table, arrays, rtol=0, atol=1e-15)


def test_hit_arrays_equal_their_masked_definitions() -> None:
    # empty lists first, inside and last: the reduceat edges
    ranked = [[], [np.nan, 2, 0, 1], [], [0, 0], [3], [1, np.nan, 1, -1, 2], [], []]
    judged = [[1], [2, 1, 0], [], [0], [3], [1, 1, 2], [], [4]]
    lists = RankedLists.from_sequences(ranked, judged)
    mask = lists.is_rel
    np.testing.assert_array_equal(lists.hits, np.flatnonzero(mask))
    np.testing.assert_array_equal(lists.hit_seg, lists.seg[mask])
    np.testing.assert_array_equal(lists.hit_pos, lists.pos[mask])
    np.testing.assert_array_equal(lists.hit_rank, lists.rel_cum[mask])
    np.testing.assert_array_equal(lists.hit_count, np.bincount(lists.seg[mask], minlength=lists.n))
    empty = RankedLists.from_sequences([[], []], [[1], []])
    assert empty.hit_count.tolist() == [0, 0] and empty.hits.size == 0


def test_segment_arrays_of_both_sides_locate_every_element_and_are_kept() -> None:
    # empty lists first, inside and last; the judged side has other lengths than the retrieved one
    ranked = [[], [np.nan, 2, 0, 1], [], [0, 0], [3], []]
    judged = [[1, 0], [2, 1, 0], [], [], [3, 3, 1, 0], [4]]
    lists = RankedLists.from_sequences(ranked, judged)
    for flat, counts, offsets, seg, pos in (
            (lists.rel, lists.n_ret, lists.offsets, lists.seg, lists.pos),
            (lists.judged, lists.judged_count, lists.judged_offsets, lists.judged_seg, lists.judged_pos)):
        expected = [(q, i) for q, n in enumerate(counts) for i in range(n)]
        assert list(zip(seg.tolist(), pos.tolist())) == expected and len(flat) == len(expected)
        assert offsets.tolist() == [sum(counts[:q]) for q in range(len(counts))]
        assert seg.dtype == pos.dtype == offsets.dtype == np.int64
    assert lists.judged_count.tolist() == [2, 3, 0, 0, 4, 1] and lists.n_ret.tolist() == [0, 4, 0, 2, 1, 0]
    # computed once: later reads return the very same arrays, held on the instance
    assert lists.pos is lists.pos is lists.segments.positions and "pos" in vars(lists)
    assert lists.judged_seg is lists.judged_segments.ids
    # a head has its own segmentation of the cut lists, and the same judged side
    head = lists.head(1)
    assert head.pos.tolist() == [0, 0, 0] and head.seg.tolist() == [1, 3, 4]
    np.testing.assert_array_equal(head.judged_pos, lists.judged_pos)
    empty = RankedLists.from_sequences([], [])
    assert empty.offsets.size == empty.seg.size == empty.judged_pos.size == 0


@pytest.mark.parametrize("gain,same_as", [("linear", {1: 1, 2: 2, 3: 3}), ("exponential", {1: 1, 2: 3, 3: 7})])
@pytest.mark.parametrize("k", [1, 2, 5, None])
def test_ideal_from_the_judged_heads_equals_the_general_path(gain, same_as, k) -> None:
    # a mapping gain takes the general (sorting) path; the named gains read the judged heads
    lists = RankedLists.from_arrays(_inputs(5).merged())
    ranked = [lists.rel[o:o + n] for o, n in zip(lists.offsets, lists.n_ret)]
    judged = [lists.judged[o:o + n] for o, n in zip(lists.judged_offsets, lists.judged_count)]
    np.testing.assert_array_equal(scorebench.metric("ndcg@k").fn(ranked, judged, k=k, gain=gain),
                                  scorebench.metric("ndcg@k").fn(ranked, judged, k=k, gain=same_as))
