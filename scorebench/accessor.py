"""The ``DataFrame.scorebench`` accessor: the pandas face of the same engine."""

from __future__ import annotations

from typing import Any

import pandas as pd


@pd.api.extensions.register_dataframe_accessor("scorebench")
class ScorebenchAccessor:
    """``df.scorebench.evaluate(...)`` and ``df.scorebench.compare(...)``.

    Examples
    --------
    >>> import pandas as pd, scorebench
    >>> t = pd.DataFrame({"y": [1, 0], "p": [0.8, 0.4]})
    >>> float(t.scorebench.evaluate("brier_score", n_boot=0)["value"].iloc[0])
    0.1
    """

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = frame

    def evaluate(self, metrics: Any, **options: Any) -> pd.DataFrame:
        """Same as :func:`scorebench.evaluate` on this DataFrame."""
        from scorebench.evaluation.evaluate import evaluate

        return evaluate(self._frame, metrics, **options)

    def compare(self, metric: Any, **options: Any) -> pd.DataFrame:
        """Same as :func:`scorebench.compare` on this DataFrame."""
        from scorebench.evaluation.comparison import compare

        return compare(self._frame, metric, **options)
