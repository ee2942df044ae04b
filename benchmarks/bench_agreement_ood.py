"""Agreement and OOD metrics: speed next to scipy / scikit-learn in one process.

Run: ``python benchmarks/bench_agreement_ood.py``

* correlations (Pearson, Spearman, Kendall tau-b) on 1,000,000 continuous pairs and on
  1,000,000 ratings on a 1-5 scale, next to ``scipy.stats``;
* quadratic weighted kappa on 1,000,000 ratings next to scikit-learn's
  ``cohen_kappa_score(weights="quadratic")``;
* AUROC, AUPR and FPR@95%TPR on 1,000,000 scores (with ties) next to scikit-learn's
  ``roc_auc_score``, ``average_precision_score`` and ``roc_curve``;
* ``scorebench.evaluate`` of ``auroc`` + ``fpr_at_95_tpr`` with 1,000 bootstrap resamples,
  10,000 rows x 2 systems (no reference: the number is the wall time a user waits).

Each figure is the best of 3 runs; values are checked to agree before timing is printed.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd


def _timed(fn, *args, repeat: int = 3, **kwargs):
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn(*args, **kwargs)
        best = min(best, time.perf_counter() - start)
    return best, value


def _row(label: str, ours: float, ref: float, v_ours: float, v_ref: float) -> None:
    assert abs(v_ours - v_ref) < 1e-9, (label, v_ours, v_ref)
    print(f"{label:<40} scorebench {ours * 1e3:9.1f} ms   reference {ref * 1e3:9.1f} ms   "
          f"ratio ref/ours {ref / ours:6.2f}")


def main() -> None:
    from scipy import stats
    from sklearn.metrics import average_precision_score, cohen_kappa_score, roc_auc_score, roc_curve

    import scorebench
    from scorebench.metrics import agreement as ag, ood

    rng = np.random.default_rng(0)
    n = 1_000_000
    x = rng.normal(size=n)
    y = x + rng.normal(size=n)
    rx = np.clip(np.round(x + 3), 1, 5)
    ry = np.clip(np.round(y + 3), 1, 5)
    for name, a, b in (("continuous", x, y), ("1-5 ratings", rx, ry)):
        for metric, ours, ref in (("pearson", ag.pearson, lambda u, v: stats.pearsonr(u, v)[0]),
                                  ("spearman", ag.spearman, lambda u, v: stats.spearmanr(u, v)[0]),
                                  ("kendall_tau", ag.kendall_tau, lambda u, v: stats.kendalltau(u, v)[0])):
            t1, v1 = _timed(ours, a, b)
            t2, v2 = _timed(ref, a, b)
            _row(f"{metric} ({name}, n=1e6)", t1, t2, v1, v2)
    t1, v1 = _timed(ag.qwk, rx, ry, labels=[1, 2, 3, 4, 5])
    t2, v2 = _timed(cohen_kappa_score, rx, ry, weights="quadratic", labels=[1, 2, 3, 4, 5])
    _row("qwk (1-5 ratings, n=1e6)", t1, t2, v1, v2)

    is_ood = (rng.random(n) < 0.3).astype(float)
    score = np.round(rng.normal(size=n) + is_ood, 2)

    def sk_fpr95(lab, s):
        fpr, tpr, _ = roc_curve(1 - lab, -s, drop_intermediate=False)
        return fpr[np.searchsorted(tpr, 0.95)]

    for metric, ours, ref in (("auroc", ood.auroc, roc_auc_score),
                              ("aupr", ood.aupr, average_precision_score),
                              ("fpr_at_95_tpr", ood.fpr_at_95_tpr, sk_fpr95)):
        t1, v1 = _timed(ours, is_ood, score)
        t2, v2 = _timed(ref, is_ood, score)
        _row(f"{metric} (n=1e6, tied scores)", t1, t2, v1, v2)

    table = pd.DataFrame({"system": np.repeat(["a", "b"], 10_000),
                          "score": rng.normal(size=20_000), "is_ood": rng.integers(0, 2, 20_000)})
    t, _ = _timed(scorebench.evaluate, table, ["auroc", "fpr_at_95_tpr"], kind="ood", n_boot=1000, repeat=1)
    print(f"{'evaluate auroc+fpr95, 2x10k rows, 1000 boot':<40} scorebench {t * 1e3:9.1f} ms")


if __name__ == "__main__":
    main()
