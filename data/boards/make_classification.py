"""Probabilistic classification zoo: out-of-fold class probabilities of scikit-learn classifiers.

Every classifier predicts every item of each dataset once, from a model fitted on the other
folds (stratified 5-fold cross-validation, seeded), so each system is scored on the same
items. Datasets ship with scikit-learn (breast cancer, digits, wine, iris): offline.

Probabilities are floored at ``1e-6`` and renormalised before writing (k-NN, trees and
isotonic calibration predict exact zeros, whose log score would be infinite); the floor is
part of each system's forecast and is the same for all systems.

Output: ``data/boards/classification.parquet``, a long ``multiclass`` table with columns
``task, system, id, y, p_0, ..., p_9`` (``p_k`` is NaN where a dataset has fewer classes).

Run: ``python data/boards/make_classification.py`` (about a minute on 2 cores).
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from board_io import write_parquet  # noqa: E402
from sklearn import datasets  # noqa: E402
from sklearn.calibration import CalibratedClassifierCV  # noqa: E402
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier  # noqa: E402
from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402
from sklearn.model_selection import StratifiedKFold, cross_val_predict  # noqa: E402
from sklearn.naive_bayes import GaussianNB  # noqa: E402
from sklearn.neighbors import KNeighborsClassifier  # noqa: E402
from sklearn.neural_network import MLPClassifier  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
from sklearn.svm import SVC  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

SEED = 0
FLOOR = 1e-6
OUT = Path(__file__).resolve().parent / "classification.parquet"
DATASETS = {
    "breast_cancer": datasets.load_breast_cancer,
    "digits": datasets.load_digits,
    "wine": datasets.load_wine,
    "iris": datasets.load_iris,
}


def zoo(seed: int) -> dict:
    """Name -> unfitted estimator; every estimator is seeded."""
    scaled = lambda est: make_pipeline(StandardScaler(), est)  # noqa: E731
    return {
        "logistic_regression": scaled(LogisticRegression(C=1.0, max_iter=2000)),
        "gaussian_nb": GaussianNB(),
        "lda": LinearDiscriminantAnalysis(),
        "knn_15": scaled(KNeighborsClassifier(n_neighbors=15)),
        "decision_tree": DecisionTreeClassifier(min_samples_leaf=5, random_state=seed),
        "random_forest": RandomForestClassifier(n_estimators=200, random_state=seed, n_jobs=1),
        "gradient_boosting": HistGradientBoostingClassifier(max_iter=100, random_state=seed),
        "svm_platt": scaled(CalibratedClassifierCV(SVC(kernel="rbf", C=1.0), method="sigmoid", cv=3)),
        "svm_isotonic": scaled(CalibratedClassifierCV(SVC(kernel="rbf", C=1.0), method="isotonic", cv=3)),
        "mlp": scaled(MLPClassifier(hidden_layer_sizes=(64,), max_iter=500, random_state=seed)),
    }


def predictions(seed: int = SEED) -> pd.DataFrame:
    frames = []
    for task, loader in DATASETS.items():
        X, y = loader(return_X_y=True)
        cv = StratifiedKFold(n_splits=5, shuffle=True, random_state=seed)
        for system, estimator in zoo(seed).items():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                proba = cross_val_predict(estimator, X, y, cv=cv, method="predict_proba")
            proba = np.maximum(proba, FLOOR)
            proba /= proba.sum(axis=1, keepdims=True)
            frame = pd.DataFrame(proba, columns=[f"p_{k}" for k in range(proba.shape[1])])
            frame.insert(0, "y", y.astype(np.int64))
            frame.insert(0, "id", np.arange(len(y), dtype=np.int64))
            frame.insert(0, "system", system)
            frame.insert(0, "task", task)
            frames.append(frame)
            print(f"{task:14s} {system:20s} accuracy {np.mean(proba.argmax(1) == y):.3f}", flush=True)
    table = pd.concat(frames, ignore_index=True)
    cols = ["task", "system", "id", "y"] + [f"p_{k}" for k in range(10)]
    return table.reindex(columns=cols)


def main() -> None:
    table = predictions()
    write_parquet(table, OUT)


if __name__ == "__main__":
    main()
