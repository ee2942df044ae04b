r"""Judge-corrected estimates: PPI / PPI++ / stratified PPI and the Rogan-Gladen correction.

Read from a ``judged`` table (:mod:`.kind`): an LLM judge's score on every row, a human
score on a random subset. The judge alone is biased; these estimators use the human labels
to remove its bias and the judge's labels to shrink the variance (:mod:`.ppi`,
:mod:`.rogan_gladen`). The PPI metrics and ``rogan_gladen`` reduce by sums (they merge
across Dask partitions) and bootstrap by weighted sums; their normal intervals are the
``*_interval`` functions.

Examples
--------
>>> import numpy as np, pandas as pd, scorebench
>>> rng = np.random.default_rng(0)
>>> human = rng.integers(0, 2, 300).astype(float)
>>> judge = np.where(rng.random(300) < 0.85, human, 1 - human)
>>> t = pd.DataFrame({"judge": judge, "human": np.where(np.arange(300) < 80, human, np.nan)})
>>> s = scorebench.evaluate(t, ["ppi_mean", "rogan_gladen"], n_boot=200, seed=0)
>>> s["metric"].tolist()
['ppi_mean', 'rogan_gladen']
"""

from __future__ import annotations

from typing import Any

from scorebench.core.registry import register
from scorebench.metrics.judged import kind as _kind  # noqa: F401  (registers the judged kind)
from scorebench.metrics.judged.ppi import (ppi_difference_interval, ppi_finalize, ppi_mean, ppi_mean_interval, ppi_stats, ppi_win_rate,
                  stratified_ppi_interval, stratified_ppi_mean)
from scorebench.metrics.judged.rogan_gladen import rogan_gladen, rogan_gladen_finalize, rogan_gladen_interval, rogan_gladen_stats

__all__ = ["ppi_mean", "ppi_win_rate", "ppi_mean_interval", "ppi_difference_interval", "stratified_ppi_mean",
           "stratified_ppi_interval", "rogan_gladen", "rogan_gladen_interval"]

_FAMILY = "judged"
_PPI = ("Angelopoulos et al. (2023), Prediction-powered inference, Science 382; Angelopoulos, Duchi & Zrnic (2023), "
        "PPI++, arXiv:2311.01453")


def _ppi_partial(arrays: Any, weights: Any, lam: Any = None) -> Any:
    return ppi_stats(arrays["judge"], arrays["human"], weights)


def _ppi_final(stats: Any, lam: Any = None) -> Any:
    return ppi_finalize(stats, None if lam in (None, "auto", "none") else float(lam))[0]


def _rg_partial(arrays: Any, weights: Any) -> Any:
    return rogan_gladen_stats(arrays["judge"], arrays["human"], weights)


def _rg_final(stats: Any) -> Any:
    return rogan_gladen_finalize(stats)[0]


register("ppi_mean", family=_FAMILY, kind="judged", inputs=("judge", "human"), higher_is_better=True,
         per_row=False, params={"lam": None}, interval="percentile", partial=_ppi_partial, finalize=_ppi_final,
         citation=_PPI, tested_against=('ppi-python estimates (tests/metrics/test_judged.py)', 1e-09))(ppi_mean)
register("ppi_win_rate", family=_FAMILY, kind="judged", inputs=("judge", "human"), higher_is_better=True,
         bounds=(-1.0, 2.0), per_row=False, params={"lam": None}, interval="percentile", partial=_ppi_partial,
         finalize=_ppi_final, citation=_PPI + " (win rate = mean preference 1/0.5/0)", tested_against=('ppi-python estimates (tests/metrics/test_judged.py)', 1e-09))(ppi_win_rate)
register("stratified_ppi_mean", family=_FAMILY, kind="judged", inputs=("judge", "human", "stratum"),
         higher_is_better=True, per_row=False, params={"lam": None}, interval="percentile",
         citation="Fisch et al. (2024), Stratified Prediction-Powered Inference for Hybrid Language Model "
                  "Evaluation, NeurIPS 2024, arXiv:2406.04291", tested_against=('ppi-python estimates (tests/metrics/test_judged.py)', 1e-09))(stratified_ppi_mean)
register("rogan_gladen", family=_FAMILY, kind="judged", inputs=("judge", "human"), higher_is_better=True,
         bounds=(0.0, 1.0), per_row=False, interval="percentile", partial=_rg_partial, finalize=_rg_final,
         citation="Rogan & Gladen (1978), American Journal of Epidemiology 107(1)", tested_against=('closed form (Rogan & Gladen 1978)', 1e-12))(rogan_gladen)
