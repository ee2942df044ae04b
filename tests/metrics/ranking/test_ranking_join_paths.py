"""The run-qrels join of the ranking kind on every path: all judged / partly judged / none,
one or several systems, tied scores, duplicate documents (judged or not), hash collisions,
and the cache-sized lookup behind it. Each relevance is checked against a plain-Python
reference of trec_eval's ordering."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scorebench.core.errors import InputError
from scorebench.metrics.ranking import extract_ranking
from scorebench.metrics.ranking.kind import _Judgments, _match_step


def _case(seed: int, judged: float, systems: int = 1, n_q: int = 25, ties: bool = False):
    rng = np.random.default_rng(seed)
    frames = []
    for s in range(systems):
        rows = [(f"q{q}", f"d{d}", float(rng.integers(0, 4)) if ties else float(rng.normal()))
                for q in range(n_q) for d in rng.choice(60, int(rng.integers(0, 30)), replace=False)]
        frame = pd.DataFrame(rows, columns=["qid", "docid", "score"])
        frames.append(frame.assign(system=f"s{s}") if systems > 1 else frame)
    run = pd.concat(frames, ignore_index=True).sample(frac=1.0, random_state=seed, ignore_index=True)
    pool = [(f"q{q}", f"d{d}") for q in range(n_q + 2) for d in range(60)]  # two queries no run has
    take = rng.random(len(pool)) < judged
    qrels = pd.DataFrame([p for p, t in zip(pool, take) if t], columns=["qid", "docid"])
    qrels["relevance"] = rng.integers(-1, 4, len(qrels))
    return run, qrels


def _expected_rel(inputs, run: pd.DataFrame, qrels: pd.DataFrame) -> np.ndarray:
    grade = {(q, d): float(r) for q, d, r in qrels.itertuples(index=False)}
    out = []
    for unit in inputs.frame.itertuples(index=False):
        rows = run[run.qid == unit.qid]
        if "system" in inputs.frame.columns:
            rows = rows[rows.system == unit.system]
        # score descending, then docid descending (strcmp)
        ranked = sorted(zip(rows.score, rows.docid), key=lambda t: (t[0], t[1]), reverse=True)
        out.extend(grade.get((unit.qid, d), np.nan) for _, d in ranked)
    return np.array(out)


@pytest.mark.parametrize("judged", [1.0, 0.6, 0.0])
@pytest.mark.parametrize("systems", [1, 3])
@pytest.mark.parametrize("ties", [False, True])
def test_join_matches_reference(judged: float, systems: int, ties: bool) -> None:
    run, qrels = _case(int(judged * 10) + systems, judged, systems, ties=ties)
    if judged == 1.0:  # every retrieved document judged: the join's all-hit branch
        qrels = pd.concat([qrels, run[["qid", "docid"]].drop_duplicates().assign(relevance=2)]) \
            .drop_duplicates(["qid", "docid"], ignore_index=True)
    inputs = extract_ranking(run, qrels=qrels)
    np.testing.assert_array_equal(inputs.consts["rel"], _expected_rel(inputs, run, qrels))


def test_complete_adds_empty_queries() -> None:
    run, qrels = _case(5, 0.5, systems=2)
    inputs = extract_ranking(run, qrels=qrels, complete=True)
    assert (inputs.arrays["n_ret"] == 0).sum() >= 4  # each system lacks the two extra queries
    np.testing.assert_array_equal(inputs.consts["rel"], _expected_rel(inputs, run, qrels))


@pytest.mark.parametrize("systems", [1, 3])
@pytest.mark.parametrize("judged", [True, False])
def test_duplicate_documents_are_refused(systems: int, judged: bool) -> None:
    run, qrels = _case(7, 0.5, systems)
    grades = set(zip(qrels.qid, qrels.docid))
    pick = next(i for i, (q, d) in enumerate(zip(run.qid, run.docid)) if ((q, d) in grades) == judged)
    twice = pd.concat([run, run.iloc[[pick]].assign(score=-5.0)], ignore_index=True)
    with pytest.raises(InputError, match="retrieved twice") as err:
        extract_ranking(twice, qrels=qrels)
    # data rows are counted from 1 in messages: the original and the appended copy
    assert f"data rows {pick + 1}, {len(run) + 1}" in str(err.value)


def test_same_document_in_two_systems_is_no_duplicate() -> None:
    run = pd.DataFrame({"system": ["a", "b", "a", "b"], "qid": "1", "docid": ["x", "x", "y", "z"],
                        "score": [1.0, 2.0, 0.5, 0.1]})
    qrels = pd.DataFrame({"qid": "1", "docid": ["x", "z"], "relevance": [2, 1]})
    inputs = extract_ranking(run, qrels=qrels)
    np.testing.assert_array_equal(inputs.consts["rel"], [2.0, np.nan, 2.0, 1.0])


@pytest.mark.parametrize("judged", [1.0, 0.5])
@pytest.mark.parametrize("systems", [1, 2])
def test_hash_collisions_take_the_exact_path(monkeypatch, judged: float, systems: int) -> None:
    run, qrels = _case(11, judged, systems)
    expected = extract_ranking(run, qrels=qrels).consts["rel"]

    def few_hashes(arr):  # 4 first hashes for all ids: collisions in every query
        n = len(arr)
        return np.arange(n, dtype=np.uint64) % np.uint64(4) << np.uint64(60), np.arange(n, dtype=np.uint32)

    monkeypatch.setattr("scorebench.metrics.ranking.kind.hash_strings", few_hashes)
    np.testing.assert_array_equal(extract_ranking(run, qrels=qrels).consts["rel"], expected)


@pytest.mark.parametrize("layout", ["grouped", "one_group", "all_absent", "all_present"])
def test_match_step_finds_present_keys_only(layout: str) -> None:
    rng = np.random.default_rng(len(layout))
    sorted_keys = np.unique(rng.integers(0, 5000, 800).astype(np.uint64))
    keys = {"grouped": np.sort(rng.integers(0, 5200, 1500).astype(np.uint64)).reshape(-1, 50)[:, ::-1].ravel(),
            "one_group": rng.integers(100, 200, 60).astype(np.uint64),
            "all_absent": np.array([5001, 6000, 7000], dtype=np.uint64),
            "all_present": rng.permutation(sorted_keys)}[layout]
    row = rng.permutation(len(sorted_keys))  # the judgment (qrels row) behind each sorted key
    judgments = _Judgments(1, True, np.zeros(len(row), np.uint32), np.zeros(len(row)), row, sorted_keys)
    qi, hit = _match_step(judgments, keys)
    present = np.isin(keys, sorted_keys)
    assert (hit is None) == bool(present.all())
    np.testing.assert_array_equal(np.ones(len(keys), bool) if hit is None else hit, present)
    np.testing.assert_array_equal(qi, row[np.searchsorted(sorted_keys, keys[present])])
