"""Probabilistic forecasting: rolling-origin forecasts of statsmodels models on bundled series.

Series (all ship with statsmodels, offline): yearly sunspot activity (1700-2008), monthly
mean Mauna Loa CO2 (weekly data averaged by month, gaps interpolated), US quarterly
unemployment rate (macrodata, 1959-2009) and the yearly Nile flow (1871-1970).

Systems (each a statsmodels state-space model, refitted at every origin on a trailing
window): ``naive`` (random walk, ARIMA(0,1,0)), ``seasonal_naive`` (SARIMA(0,0,0)(0,1,0)s;
not for the Nile, which has no season), ``arima`` (ARIMA(1,1,1)), ``sarima``
(SARIMA(1,0,1)(0,1,1)s with drift; ARIMA(2,0,1) with a constant for the Nile) and ``ets``
(additive damped-trend exponential smoothing, with an additive season where there is one).

At each of the last 24 origins every system forecasts ``H = 6`` steps ahead: the Gaussian
predictive mean and standard deviation per step (``parametric``), its quantiles
(``quantile``) and the central 90% interval (``interval``) go to
``forecasting_marginal.parquet`` (one row per system, task, origin and horizon ``h``);
50 simulated future paths per origin go to ``forecasting_paths.parquet`` (``multivariate``:
``y.1..y.6`` and ``m<j>.<h>``). Seeded; about a minute on 2 cores.

Run: ``python data/boards/make_forecasting.py``.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import statsmodels.api as sm  # noqa: E402
from scipy.stats import norm  # noqa: E402
from statsmodels.tsa.exponential_smoothing.ets import ETSModel  # noqa: E402
from statsmodels.tsa.statespace.sarimax import SARIMAX  # noqa: E402

SEED = 0
H = 6
ORIGINS = 24
WINDOW = 240
PATHS = 50
LEVELS = (0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.975)
HERE = Path(__file__).resolve().parent


def series() -> dict[str, tuple[np.ndarray, int]]:
    """Name -> (values, season length; 1 = none)."""
    sun = sm.datasets.sunspots.load_pandas().data["SUNACTIVITY"].to_numpy(float)
    co2 = sm.datasets.co2.load_pandas().data["co2"]
    co2 = co2.resample("MS").mean().interpolate().to_numpy(float)
    unemp = sm.datasets.macrodata.load_pandas().data["unemp"].to_numpy(float)
    nile = sm.datasets.nile.load_pandas().data["volume"].to_numpy(float)
    return {"sunspots": (sun, 11), "co2": (co2, 12), "unemployment": (unemp, 4), "nile": (nile, 1)}


def models(season: int) -> dict:
    """System name -> function(train) -> fitted statsmodels results."""
    def sarimax(order, seasonal=(0, 0, 0, 0), trend="n"):
        return lambda y: SARIMAX(y, order=order, seasonal_order=seasonal, trend=trend).fit(disp=False)

    out = {"naive": sarimax((0, 1, 0))}
    if season > 1:
        out["seasonal_naive"] = sarimax((0, 0, 0), (0, 1, 0, season))
        out["sarima"] = sarimax((1, 0, 1), (0, 1, 1, season), trend="c")
    else:
        out["sarima"] = sarimax((2, 0, 1), trend="c")
    out["arima"] = sarimax((1, 1, 1))
    out["ets"] = lambda y: ETSModel(pd.Series(y), error="add", trend="add", damped_trend=True,
                                    seasonal="add" if season > 1 else None,
                                    seasonal_periods=season if season > 1 else None).fit(disp=False)
    return out


def forecast(result, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, standard deviation (H,) and simulated paths (PATHS, H) from a fitted model."""
    if isinstance(result.model, ETSModel):
        pred = result.get_prediction(start=result.nobs, end=result.nobs + H - 1)
        mean = np.asarray(pred.predicted_mean, float)
        sd = np.sqrt(np.asarray(pred.var_pred_mean, float))
        paths = np.asarray(result.simulate(H, repetitions=PATHS, anchor="end", rng=rng), float).T
    else:
        pred = result.get_forecast(H)
        mean = np.asarray(pred.predicted_mean, float)
        sd = np.sqrt(np.asarray(pred.var_pred_mean, float))
        paths = np.asarray(result.simulate(H, repetitions=PATHS, anchor="end", rng=rng), float)
        paths = paths.reshape(H, PATHS).T
    return mean, np.maximum(sd, 1e-9), paths


def run(seed: int = SEED) -> tuple[pd.DataFrame, pd.DataFrame]:
    marginal, joint = [], []
    for task, (y, season) in series().items():
        n = len(y)
        first = n - H - ORIGINS + 1
        for system, fit in models(season).items():
            rng = np.random.default_rng([seed, len(task), len(system), sum(map(ord, task + system))])
            for k in range(ORIGINS):
                origin = first + k  # forecasts y[origin: origin + H] from y[:origin]
                train = y[max(0, origin - WINDOW):origin]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    mean, sd, paths = forecast(fit(train), rng)
                truth = y[origin:origin + H]
                for h in range(H):
                    row = {"task": task, "system": system, "id": k * H + h, "origin": k, "h": h + 1,
                           "y": truth[h], "mu": mean[h], "sigma": sd[h],
                           "lower": norm.ppf(0.05, mean[h], sd[h]), "upper": norm.ppf(0.95, mean[h], sd[h])}
                    row.update({f"q{lv}": norm.ppf(lv, mean[h], sd[h]) for lv in LEVELS})
                    marginal.append(row)
                row = {"task": task, "system": system, "id": k}
                row.update({f"y.{h + 1}": truth[h] for h in range(H)})
                row.update({f"m{j}.{h + 1}": paths[j, h] for j in range(PATHS) for h in range(H)})
                joint.append(row)
            print(f"{task:13s} {system:15s} done", flush=True)
    return pd.DataFrame(marginal), pd.DataFrame(joint)


def _write(frame: pd.DataFrame, path: Path) -> None:
    tmp = path.with_suffix(".tmp")
    frame.to_parquet(tmp, index=False, compression="zstd")
    tmp.replace(path)
    print(f"wrote {path} ({len(frame)} rows)")


def main() -> None:
    marginal, joint = run()
    _write(marginal, HERE / "forecasting_marginal.parquet")
    _write(joint, HERE / "forecasting_paths.parquet")


if __name__ == "__main__":
    main()
