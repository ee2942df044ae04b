"""Small random tables of every registered table kind, for the registry-wide contract tests.

``make_table(kind, quality, seed)`` returns ``(table, kind_options)`` for ``quality`` in
``"random"`` (predictions unrelated to the outcomes) or ``"perfect"`` (predictions equal to
the outcomes, where the kind defines one; ``None`` otherwise). Tables have two systems
(``good``, ``bad``) of ``N`` units each, so grouping, the bootstrap and the Dask
partitioning are all exercised, and stay small so the whole contract file runs in seconds.

``BROKEN[kind]`` says how to make a table of that kind invalid: the column to drop (missing
column) and a numeric column to spoil (NaN, text).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import pandas as pd

N = 40  # units per system
SYSTEMS = ("good", "bad")


@dataclass(frozen=True)
class Broken:
    """How to spoil a valid table of one kind."""

    drop: str  # a required column
    numeric: str  # a required numeric column (gets a NaN, or text)


BROKEN = {
    "binary": Broken("p", "p"),
    "multiclass": Broken("y", "p_0"),
    "correct": Broken("correct", "correct"),
    "ensemble": Broken("y", "m1"),
    "quantile": Broken("y", "q0.5"),
    "interval": Broken("upper", "lower"),
    "multivariate": Broken("y.1", "m1.0"),
    "parametric": Broken("y", "y"),
    "rating": Broken("y_pred", "y_true"),
    "ood": Broken("is_ood", "score"),
    "listwise": Broken("label", "score"),
    "embeddings": Broken("label", "f1"),
    "ranking": Broken("score", "score"),
    "samples": Broken("id", "acc"),
    "preferences": Broken("score_chosen", "score_rejected"),
    "judgments": Broken("g2_winner", "len_1"),
    "features": Broken("system", "f1"),
    "parametric_counts": Broken("y", "y"),
    "listwise_softmax": Broken("label", "score"),
    "listwise_logit": Broken("label", "score"),
    "diversity": Broken("score", "score"),
    "prefs": Broken("score", "score"),
    "mdp": Broken("reward", "reward"),
    "weighted_ensemble": Broken("w1", "m1"),
    "weighted_multivariate": Broken("y.1", "w1"),
    "attempts": Broken("correct", "correct"),
    "judged": Broken("human", "judge"),
    "alpaca_annotations": Broken("instruction_difficulty", "len_1"),
}


def _systems(n: int = N) -> np.ndarray:
    return np.repeat(np.array(SYSTEMS, dtype=object), n)


def _ids(n: int = N) -> np.ndarray:
    return np.tile(np.arange(n), len(SYSTEMS))


def _noise(rng: np.random.Generator, perfect: bool, size, scale: float = 1.0) -> np.ndarray:
    """Prediction error: tiny for a perfect system (continuous forecasts need a spread)."""
    return rng.normal(scale=1e-3 if perfect else scale, size=size)


def _binary(rng, perfect):
    y = rng.integers(0, 2, 2 * N)
    p = y.astype(float) if perfect else rng.uniform(0.02, 0.98, 2 * N)
    return pd.DataFrame({"system": _systems(), "id": _ids(), "y": y, "p": p}), {}


def _multiclass(rng, perfect):
    y = rng.integers(0, 3, 2 * N)
    P = np.eye(3)[y] if perfect else rng.dirichlet(np.ones(3), 2 * N)
    return pd.DataFrame({"system": _systems(), "id": _ids(), "y": y, **{f"p_{k}": P[:, k] for k in range(3)}}), {}


def _correct(rng, perfect):
    correct = np.ones(2 * N, dtype=int) if perfect else rng.integers(0, 2, 2 * N)
    return pd.DataFrame({"system": _systems(), "id": _ids(), "correct": correct}), {}


def _ensemble(rng, perfect):
    y = rng.normal(size=2 * N)
    members = {f"m{j}": y + _noise(rng, perfect, 2 * N) for j in range(5)}
    return pd.DataFrame({"system": _systems(), "id": _ids(), "y": y, **members}), {}


def _quantile(rng, perfect):
    y = rng.normal(size=2 * N)
    centre = y + _noise(rng, perfect, 2 * N)
    spread = 1e-3 if perfect else 1.0
    return pd.DataFrame({"system": _systems(), "id": _ids(), "y": y, "q0.1": centre - 1.3 * spread,
                         "q0.5": centre, "q0.9": centre + 1.3 * spread}), {}


def _interval(rng, perfect):
    y = rng.normal(size=2 * N)
    centre = y + _noise(rng, perfect, 2 * N)
    half = 1e-3 if perfect else 1.5
    return pd.DataFrame({"system": _systems(), "id": _ids(), "y": y, "lower": centre - half,
                         "upper": centre + half}), {}


def _multivariate(rng, perfect):
    y = rng.normal(size=(2 * N, 2))
    cols = {f"y.{d}": y[:, d] for d in range(2)}
    cols.update({f"m{j}.{d}": y[:, d] + _noise(rng, perfect, 2 * N) for j in range(4) for d in range(2)})
    return pd.DataFrame({"system": _systems(), "id": _ids(), **cols}), {}


def _parametric(rng, perfect):
    # Every parameter column any parametric rule reads; the outcome lies on every support
    # that is an interval containing (0, 1). Only location families have a "perfect"
    # forecast (``mu`` at the outcome with a tiny scale); see PERFECT_PARAMETRIC.
    # The location sits below the outcome, so that the outcome is on the support of the
    # generalised Pareto and GEV forecasts (shape 0.5) as well.
    y = rng.uniform(0.05, 0.95, 2 * N)
    mu = y - np.abs(_noise(rng, perfect, 2 * N, 0.5))
    scale = 1e-3 if perfect else 0.3
    return pd.DataFrame({"system": _systems(), "id": _ids(), "y": y, "mu": mu, "sigma": scale, "b": 2.0,
                         "s": scale, "scale1": scale, "scale2": scale, "a": 2.0, "rate": 1.5,
                         "shape": 0.5, "mulog": -0.7, "sigmalog": 0.5, "df": 5.0, "low": 0.0, "high": 1.0,
                         "mean": 2.0, "n": 5, "prob": 0.4, "m": 6, "k": 4, "mu0": mu, "sigma0": scale,
                         "w0": 0.5, "mu1": mu + 0.4, "sigma1": 0.2, "w1": 0.5}), {}


def _parametric_counts(rng, perfect):
    # Count distributions (Poisson, binomial, negative binomial, hypergeometric) need
    # integer outcomes on their support; their parameters carry no "perfect" forecast.
    table, options = _parametric(rng, perfect)
    return table.assign(y=rng.integers(0, 5, len(table))), options


def _rating(rng, perfect):
    y_true = rng.integers(1, 6, 2 * N)
    y_pred = y_true if perfect else rng.integers(1, 6, 2 * N)
    return pd.DataFrame({"system": _systems(), "id": _ids(), "y_true": y_true, "y_pred": y_pred,
                         "group": _ids() % 8}), {}


def _ood(rng, perfect):
    is_ood = np.tile(np.arange(N) % 2, 2)
    score = (10.0 * is_ood if perfect else 0.0) + rng.normal(size=2 * N)
    return pd.DataFrame({"system": _systems(), "id": _ids(), "is_ood": is_ood, "score": score}), {}


def _listwise(rng, perfect, scale="sharp"):
    # Soft labels in [0, 1] (RCR reads them as probabilities), all distinct: ListMLE orders
    # tied labels by their row order, which a partitioned engine need not keep. A perfect
    # scorer ranks by the labels with margins far above the temperature of the smoothed
    # rank losses (ApproxNDCG, NeuralNDCG); for ListNet it equals the labels ("softmax"), the
    # optimum of its cross-entropy between the two softmaxes; for RCR it is their logit
    # ("logit"), whose sigmoid is the calibrated relevance probability.
    label = rng.uniform(0.02, 0.98, size=2 * N)
    perfect_score = {"sharp": 50.0 * label, "softmax": label, "logit": np.log(label / (1 - label))}[scale]
    score = perfect_score if perfect else rng.normal(size=2 * N)
    return pd.DataFrame({"system": _systems(), "qid": _ids() // 5, "score": score, "label": label}), {}


def _listwise_softmax(rng, perfect):
    return _listwise(rng, perfect, "softmax")


def _listwise_logit(rng, perfect):
    return _listwise(rng, perfect, "logit")


def _embeddings(rng, perfect):
    label = _ids() % 4
    X = 10.0 * np.eye(4)[label] if perfect else np.zeros((2 * N, 4))
    X = X + rng.normal(size=(2 * N, 4))
    return pd.DataFrame({"system": _systems(), "label": label, **{f"f{d}": X[:, d] for d in range(4)}}), {}


def _ranking(rng, perfect):
    queries, docs = 8, 10
    qid = np.repeat([f"q{q}" for q in range(queries)], docs)
    docid = np.tile([f"d{d}" for d in range(docs)], queries)
    rel = rng.integers(0, 3, qid.size) * (rng.uniform(size=qid.size) < 0.5)
    rel[::docs] = np.maximum(rel[::docs], 1)  # every query has a relevant document
    qrels = pd.DataFrame({"qid": qid, "docid": docid, "relevance": rel})
    runs = []
    for system in SYSTEMS:
        score = rel + 1e-3 * rng.uniform(size=qid.size) if perfect else rng.normal(size=qid.size)
        # a random run retrieves most but not all documents; a perfect one exactly the relevant
        keep = rel > 0 if perfect else rng.uniform(size=qid.size) < 0.9
        runs.append(pd.DataFrame({"system": system, "qid": qid[keep], "docid": docid[keep], "score": score[keep]}))
    return pd.concat(runs, ignore_index=True), {"qrels": qrels}


def _samples(rng, perfect):
    return pd.DataFrame({"system": _systems(), "task": "t", "id": _ids(), "acc": rng.integers(0, 2, 2 * N)}), {}


_SUBSETS = np.array(["alpacaeval-easy", "mt-bench-hard", "donotanswer", "hep-go", "math-prm"])


def _preferences(rng, perfect):
    rejected = rng.normal(size=2 * N)
    chosen = rejected + 1.0 if perfect else rng.normal(size=2 * N)
    return pd.DataFrame({"system": _systems(), "id": _ids(), "subset": _SUBSETS[_ids() % 5],
                         "score_chosen": chosen, "score_rejected": rejected,
                         "len_chosen": rng.integers(50, 500, 2 * N),
                         "len_rejected": rng.integers(50, 500, 2 * N)}), {}


def _judgments(rng, perfect):
    verdicts = np.array(["model_1", "model_2", "tie"])
    g1 = verdicts[rng.integers(0, 3, 2 * N)]
    g2 = g1 if perfect else verdicts[rng.integers(0, 3, 2 * N)]
    return pd.DataFrame({"system": _systems(), "question_id": _ids(), "model_1": "a", "model_2": "b",
                         "g1_winner": g1, "g2_winner": g2, "len_1": rng.integers(50, 500, 2 * N),
                         "len_2": rng.integers(50, 500, 2 * N)}), {}


def _alpaca_annotations(rng, perfect):
    preference = np.full(2 * N, 2.0) if perfect else rng.uniform(1.0, 2.0, 2 * N)
    return pd.DataFrame({"system": _systems(), "id": _ids(), "preference": preference,
                         "len_1": rng.integers(50, 500, 2 * N), "len_2": rng.integers(50, 500, 2 * N),
                         "instruction_difficulty": rng.normal(size=2 * N)}), {}


def _features(rng, perfect):
    real = rng.normal(size=(N, 2))
    fake = {s: real + rng.normal(scale=1e-3, size=real.shape) if perfect
            else rng.normal(size=real.shape) * [2.0, 0.5] + [1.0, 0.0] for s in SYSTEMS}
    frames = [pd.DataFrame({"system": name, "f0": x[:, 0], "f1": x[:, 1]})
              for name, x in (("real", real), *fake.items())]
    table = pd.concat(frames, ignore_index=True)
    table["s0"], table["s1"] = table["f0"] * 0.5, table["f1"] - table["f0"]
    table["p_a"] = rng.uniform(0.1, 0.9, len(table))
    table["p_b"] = 1.0 - table["p_a"]
    return table, {}


def _scored_run(rng, perfect, qid, docid, gain):
    """Two systems' runs over (qid, docid): a perfect one orders by ``gain``, a random one
    retrieves about 90% of the documents in a random order."""
    runs = []
    for system in SYSTEMS:
        score = gain + 1e-3 * rng.uniform(size=qid.size) if perfect else rng.normal(size=qid.size)
        keep = np.ones(qid.size, bool) if perfect else rng.uniform(size=qid.size) < 0.9
        runs.append(pd.DataFrame({"system": system, "qid": qid[keep], "docid": docid[keep], "score": score[keep]}))
    return pd.concat(runs, ignore_index=True)


def _diversity(rng, perfect):
    queries, docs, subtopics = 8, 10, 3
    qid = np.repeat([f"q{q}" for q in range(queries)], docs)
    docid = np.tile([f"d{d}" for d in range(docs)], queries)
    rows = [(q, str(t + 1), d) for q, d in zip(qid, docid) for t in range(subtopics) if rng.uniform() < 0.3]
    rows += [(f"q{q}", "1", "d0") for q in range(queries)]  # every query has a relevant document
    qrels = pd.DataFrame(rows, columns=["qid", "subtopic", "docid"]).drop_duplicates()
    qrels["relevance"] = 1
    covered = qrels.groupby(["qid", "docid"]).size()
    gain = np.array([covered.get((q, d), 0) for q, d in zip(qid, docid)], float)
    return _scored_run(rng, perfect, qid, docid, gain), {"qrels": qrels}


def _prefs(rng, perfect):
    queries, docs = 8, 8
    qid = np.repeat([f"q{q}" for q in range(queries)], docs)
    docid = np.tile([f"d{d}" for d in range(docs)], queries)
    grade = rng.integers(0, 3, qid.size)
    grade[::docs], grade[1::docs] = 2, 0  # every query has a preference
    qrels = pd.DataFrame({"qid": qid, "jg": "u", "jsg": "0", "docid": docid, "relevance": grade})
    return _scored_run(rng, perfect, qid, docid, grade.astype(float)), {"qrels": qrels}


def _mdp(rng, perfect):
    states, actions = 3, 2
    tau = rng.dirichlet(np.ones(states), size=(states, actions))
    reference = rng.normal(size=(states, actions, states))
    s, a, s2 = (g.ravel() for g in np.meshgrid(range(states), range(actions), range(states), indexing="ij"))
    frames = []
    for system in SYSTEMS:
        reward = 2.0 * reference if perfect else rng.normal(size=reference.shape)  # scaling: distance 0
        frames.append(pd.DataFrame({"system": system, "s": [f"s{i}" for i in s], "a": [f"a{i}" for i in a],
                                    "s_next": [f"s{i}" for i in s2], "reward": reward.ravel(),
                                    "reference": reference.ravel(), "transition": tau.ravel()}))
    return pd.concat(frames, ignore_index=True), {"gamma": 0.9}


def _attempts(rng, perfect, items=12, attempts=6):
    # repeated attempts: one row per (system, item, attempt), with an extracted answer (0 is right)
    rows = len(SYSTEMS) * items * attempts
    answer = np.zeros(rows, dtype=int) if perfect else rng.integers(0, 3, rows)
    return pd.DataFrame({"system": np.repeat(np.array(SYSTEMS, dtype=object), items * attempts),
                         "item": np.tile(np.repeat(np.arange(items), attempts), len(SYSTEMS)),
                         "attempt": np.tile(np.arange(attempts), len(SYSTEMS) * items),
                         "answer": answer, "correct": (answer == 0).astype(int)}), {}


def _judged(rng, perfect):
    # a judge on every row, a human label on three in four (two strata, both labelled); a
    # perfect system is right on 90% of the items, a random one on half
    human = (rng.random(2 * N) < (0.9 if perfect else 0.5)).astype(float)
    judge = human.copy() if perfect else np.where(rng.random(2 * N) < 0.9, human, 1 - human)
    labelled = np.tile(np.arange(N) % 4 != 0, 2)
    return pd.DataFrame({"system": _systems(), "id": _ids(), "judge": judge, "human": np.where(labelled, human, np.nan),
                         "stratum": np.where(_ids() < N // 2, "easy", "hard")}), {}


def _weighted(maker):
    """A member-weighted variant of a kind's table: weights w<j> in [0.5, 2] per member."""
    def make(rng, perfect):
        table, options = maker(rng, perfect)
        members = sorted({int(c[1:].split(".")[0]) for c in table.columns if c[:1] == "m" and c[1:2].isdigit()})
        weights = {f"w{j}": rng.uniform(0.5, 2.0, len(table)) for j in members}
        return table.assign(**weights), options
    return make


MAKERS = {
    "binary": _binary, "multiclass": _multiclass, "correct": _correct, "ensemble": _ensemble,
    "quantile": _quantile, "interval": _interval, "multivariate": _multivariate, "parametric": _parametric,
    "rating": _rating, "ood": _ood, "listwise": _listwise, "embeddings": _embeddings, "ranking": _ranking,
    "samples": _samples, "preferences": _preferences, "judgments": _judgments, "features": _features,
    "parametric_counts": _parametric_counts, "listwise_softmax": _listwise_softmax,
    "listwise_logit": _listwise_logit, "diversity": _diversity, "prefs": _prefs, "mdp": _mdp,
    "weighted_ensemble": _weighted(_ensemble), "weighted_multivariate": _weighted(_multivariate),
    "attempts": _attempts, "judged": _judged, "alpaca_annotations": _alpaca_annotations,
}

#: Metrics that read a variant of their kind's table.
TABLE_OF = {name: "parametric_counts" for name in (
    "crps_binomial", "crps_negbinom", "crps_poisson", "crps_hypergeometric", "log_score_binomial",
    "log_score_negbinom", "log_score_poisson", "log_score_hypergeometric")}
TABLE_OF.update(listnet_loss="listwise_softmax", rcr_loss="listwise_logit")

#: Kinds with no "perfect system": a per-sample score table has no prediction to get right.
NO_PERFECT = {"samples": "a table of per-sample scores has no predictions, so no perfect system"}


def make_table(kind: str, quality: str = "random", seed: int = 0) -> tuple[pd.DataFrame, dict] | None:
    """A small valid table of ``kind`` (see the module docstring); ``None`` when the kind
    has no perfect system and ``quality="perfect"`` was asked."""
    if kind not in MAKERS:
        raise KeyError(f"no contract-table generator for kind {kind!r}; add one to tests/_contract_tables.py")
    if quality == "perfect" and kind in NO_PERFECT:
        return None
    rng = np.random.default_rng([seed, zlib.crc32(kind.encode())])  # a fixed stream per kind
    return MAKERS[kind](rng, quality == "perfect")
