r"""Length-bias diagnostics of reward models on preference pairs.

Preference sets often pair a longer chosen response with a shorter rejected one, so a
"reward model" that only measures length can score well: RewardBench issues #267/#268
found the pick-the-longer baseline at 100% on some subsets. Three diagnostics, evaluated
per subset with ``evaluate(..., by="system,subset")``:

* ``length_baseline_accuracy`` — accuracy of the baseline that prefers the longer
  (``pick="longer"``) or the shorter response: a property of the data, the same for
  every reward model;
* ``rm_longer_preference`` — how often the reward model prefers the longer response;
* ``margin_length_correlation`` — correlation of the reward margin
  :math:`s^+ - s^-` with the length difference :math:`\ell^+ - \ell^-`.

All read pairwise tables (one rejected response) with lengths (``len_chosen``/``len_rejected``
or the texts ``chosen``/``rejected``).

References
----------
Lambert, N. et al. (2024). RewardBench. arXiv:2403.13787; allenai/reward-bench issues #267, #268.
Singhal, P. et al. (2023). A Long Way to Go: Investigating Length Correlations in RLHF. arXiv:2310.03716.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.registry import NO_EXTERNAL_REFERENCE, register
from scorebench.core.validation import check_choice
from scorebench.metrics.agreement import average_ranks, pearson_correlation

__all__ = ["length_baseline_accuracy", "rm_longer_preference", "margin_length_correlation"]

_FAMILY = "reward"
_KIND = "preferences"
_CITE = ("Lambert et al. (2024), RewardBench, arXiv:2403.13787 (issues #267/#268); "
         "Singhal et al. (2023), A Long Way to Go, arXiv:2310.03716")


def _pair(a: Any, b: Any, what: str) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if x.ndim != 1 or y.shape != x.shape:
        raise InputError(f"{what}: expected one value per prompt for a single rejected response, got shapes "
                         f"{x.shape} and {y.shape} (length diagnostics need pairwise data, not best-of-N)")
    return x, y


def _lengths(len_chosen: Any, len_rejected: Any) -> tuple[np.ndarray, np.ndarray]:
    if len_chosen is None or len_rejected is None:
        raise InputError("length diagnostics need len_chosen and len_rejected columns (or chosen and rejected texts)")
    return _pair(len_chosen, len_rejected, "len_chosen/len_rejected")


@register("length_baseline_accuracy", family=_FAMILY, kind=_KIND, inputs=("len_chosen", "len_rejected"),
          higher_is_better=None, bounds=(0.0, 1.0), params={"pick": "longer"}, citation=_CITE,
          tested_against=NO_EXTERNAL_REFERENCE)
def length_baseline_accuracy(len_chosen: Any, len_rejected: Any, /, *, pick: str = "longer") -> np.ndarray:
    r"""Accuracy of the baseline that prefers the longer (or shorter) response; ties count half.

    .. math:: c_i = \mathbb 1[\ell^+_i > \ell^-_i] + \tfrac12\,\mathbb 1[\ell^+_i = \ell^-_i]
              \quad(\text{pick = longer; reversed for shorter})

    Returns per-prompt credits (mean = accuracy). No reward model is involved: a value
    near 1 says the subset can be solved by length alone.

    Examples
    --------
    >>> length_baseline_accuracy([300, 120, 50], [100, 120, 80]).tolist()
    [1.0, 0.5, 0.0]
    >>> length_baseline_accuracy([300, 120, 50], [100, 120, 80], pick="shorter").tolist()
    [0.0, 0.5, 1.0]
    """
    check_choice(pick, "pick", ("longer", "shorter"))
    c, r = _lengths(len_chosen, len_rejected)
    sign = np.sign(c - r) * (1.0 if pick == "longer" else -1.0)
    return (sign + 1.0) / 2.0


@register("rm_longer_preference", family=_FAMILY, kind=_KIND,
          inputs=("chosen", "rejected", "len_chosen", "len_rejected"), higher_is_better=None, bounds=(0.0, 1.0),
          citation=_CITE, tested_against=NO_EXTERNAL_REFERENCE)
def rm_longer_preference(chosen: Any, rejected: Any, len_chosen: Any, len_rejected: Any, /) -> np.ndarray:
    r"""How often the reward model prefers the longer response (0.5 = indifferent to length).

    .. math:: c_i = \tfrac12\bigl(1 + \operatorname{sign}(s^+_i - s^-_i)\,
                                  \operatorname{sign}(\ell^+_i - \ell^-_i)\bigr)

    so a pair with equal lengths or equal rewards counts 1/2. Compare with
    ``length_baseline_accuracy``: a reward model that prefers the longer response more
    often than the longer baseline is right follows length beyond the data's own bias.

    Examples
    --------
    >>> rm_longer_preference([2.0, 0.0, 1.0], [1.0, 1.0, 1.0], [300, 300, 10], [100, 100, 20]).tolist()
    [1.0, 0.0, 0.5]
    """
    c, r = _pair(chosen, rejected, "chosen/rejected")
    lc, lr = _lengths(len_chosen, len_rejected)
    return (1.0 + np.sign(c - r) * np.sign(lc - lr)) / 2.0


@register("margin_length_correlation", family=_FAMILY, kind=_KIND,
          inputs=("chosen", "rejected", "len_chosen", "len_rejected"), higher_is_better=None, bounds=(-1.0, 1.0),
          per_row=False, params={"method": "pearson"}, citation=_CITE,
          tested_against=('scipy.stats pearsonr / spearmanr', 1e-10))
def margin_length_correlation(chosen: Any, rejected: Any, len_chosen: Any, len_rejected: Any, /, *,
                              method: str = "pearson") -> float:
    r"""Correlation of the reward margin with the length difference of the pair.

    .. math:: \rho\bigl(s^+ - s^-,\; \ell^+ - \ell^-\bigr)

    Pearson's (default) or Spearman's (``method="spearman"``, on average ranks). Raises
    when either difference is constant (the correlation is then undefined).

    Examples
    --------
    >>> round(margin_length_correlation([3.0, 1.0, 2.0], [1.0, 1.0, 1.0], [400, 100, 250], [100, 100, 100]), 4)
    1.0
    """
    check_choice(method, "method", ("pearson", "spearman"))
    c, r = _pair(chosen, rejected, "chosen/rejected")
    lc, lr = _lengths(len_chosen, len_rejected)
    margin, diff = c - r, lc - lr
    if not (np.isfinite(margin).all() and np.isfinite(diff).all()):
        raise InputError("margin_length_correlation: scores and lengths must be finite")
    if margin.size < 2:
        raise InputError(f"margin_length_correlation: expected at least 2 prompts, got {margin.size}")
    if method == "spearman":
        margin, diff = average_ranks(margin), average_ranks(diff)
    return pearson_correlation(margin, diff, ("reward margin", "length difference"))
