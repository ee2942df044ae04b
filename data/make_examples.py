"""Make the example result tables in data/examples/ from data shipped with the dependencies.

Run: ``python data/make_examples.py`` (seeded, offline, under a minute on 2 cores).

- ``breast_cancer_binary.csv``: out-of-fold probabilities of four scikit-learn classifiers
  on the Wisconsin breast-cancer data (kind ``binary``: system, id, y, p).
- ``nile_forecasts.csv``: rolling-origin one-step Gaussian forecasts of the Nile river
  flow (statsmodels) by four models (kind ``parametric``: system, id, y, mu, sigma).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parent / "examples"
SEED = 0


def breast_cancer_binary() -> pd.DataFrame:
    from sklearn.datasets import load_breast_cancer
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.naive_bayes import GaussianNB
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = load_breast_cancer(return_X_y=True)
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=SEED)
    models = {
        "logistic_regression": make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000)),
        "naive_bayes": GaussianNB(),
        "random_forest": RandomForestClassifier(n_estimators=200, random_state=SEED),
        "knn_15": make_pipeline(StandardScaler(), KNeighborsClassifier(n_neighbors=15)),
    }
    frames = [pd.DataFrame({"system": name, "id": np.arange(len(y)), "y": y,
                            "p": cross_val_predict(model, X, y, cv=folds, method="predict_proba")[:, 1]})
              for name, model in models.items()]
    return pd.concat(frames, ignore_index=True)


def nile_forecasts(start: int = 30) -> pd.DataFrame:
    import statsmodels.api as sm

    flow = sm.datasets.nile.load_pandas().data["volume"].to_numpy(dtype=float)
    rows = []
    for t in range(start, len(flow)):
        past = flow[:t]
        diffs = np.diff(past)
        ar = sm.tsa.ARIMA(past, order=(1, 0, 0)).fit()
        ar_fc = ar.get_forecast(1)
        level = sm.tsa.SimpleExpSmoothing(past, initialization_method="estimated").fit()
        level_resid = past - level.fittedvalues
        candidates = {
            "naive": (past[-1], diffs.std(ddof=1)),
            "climatology": (past.mean(), past.std(ddof=1)),
            "ar1": (float(ar_fc.predicted_mean[0]), float(np.sqrt(ar_fc.var_pred_mean[0]))),
            "exp_smoothing": (float(level.forecast(1)[0]), float(level_resid.std(ddof=1))),
        }
        for system, (mu, sigma) in candidates.items():
            rows.append({"system": system, "id": 1871 + t, "y": flow[t], "mu": mu, "sigma": sigma})
    return pd.DataFrame(rows)


def main() -> None:
    import warnings

    OUT.mkdir(exist_ok=True)
    breast_cancer_binary().to_csv(OUT / "breast_cancer_binary.csv", index=False, float_format="%.10g")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nile_forecasts().to_csv(OUT / "nile_forecasts.csv", index=False, float_format="%.10g")


if __name__ == "__main__":
    main()
