"""Style-controlled Arena ratings against FastChat's compute_style_control, reimplemented here."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from _style_battles import MODELS, TRUE_COEF, TRUE_R, style_battles  # noqa: F401  (tests/ is on sys.path: conftest)
from scipy.optimize import minimize
from scipy.special import expit

import scorebench
from scorebench.aggregate.style_control import STYLE_V1, style_control
from scorebench.core.errors import InputError

# --- FastChat's reference computation, written out independently (rating_systems.py) -------------


def _fastchat_preprocess(df: pd.DataFrame):
    n_rows = len(df)
    idx, models = pd.factorize(pd.concat([df["model_a"], df["model_b"]]))
    matchups = np.column_stack([idx[:n_rows], idx[n_rows:]])
    outcomes = np.full(n_rows, 0.5)
    outcomes[df["winner"] == "model_a"] = 1.0
    outcomes[df["winner"] == "model_b"] = 0.0
    elems = ["sum_assistant_a_tokens", "header_count_a", "list_count_a", "bold_count_a",
             "sum_assistant_b_tokens", "header_count_b", "list_count_b", "bold_count_b"]
    sv = np.stack([df[f"style_{e}"].to_numpy() for e in elems]).astype(np.int32)
    diff = (sv[:4] - sv[4:]).astype(float)
    tot = (sv[:4] + sv[4:]).astype(float) + 1.0
    diff /= tot
    feats = ((diff - diff.mean(axis=1)[:, None]) / diff.std(axis=1)[:, None]).T
    return matchups, feats, outcomes, list(models)


def _fastchat_loss(params, n, matchups, features, outcomes, alpha, reg, half_reg):
    ratings, fp = params[:n], params[n:]
    logits = alpha * (ratings[matchups[:, 0]] - ratings[matchups[:, 1]]) + features @ fp
    probs = expit(logits)
    loss = -(np.log(probs) * outcomes + np.log(1 - probs) * (1 - outcomes)).sum() + half_reg * params @ params
    err = outcomes - probs
    grad = reg * params
    np.add.at(grad[:n], matchups[:, [0, 1]], (-alpha * err)[:, None] * np.array([1.0, -1.0]))
    grad[n:] -= features.T @ err
    return loss, grad


def _fastchat_style_control(df: pd.DataFrame, maxiter: int = 100, gtol: float = 1e-6):
    matchups, feats, outcomes, models = _fastchat_preprocess(df)
    n = len(models)
    res = minimize(_fastchat_loss, np.zeros(n + feats.shape[1]),
                   args=(n, matchups, feats, outcomes, math.log(10.0), 0.5, 0.25), jac=True, method="L-BFGS-B",
                   options={"maxiter": maxiter, "gtol": gtol})
    return pd.Series(res.x[:n] * 400 + 1000, index=models), res.x[n:]


def _sklearn_style_control(df: pd.DataFrame):
    """FastChat's first version: LogisticRegression(C=1, no intercept) on battles duplicated for ties."""
    from sklearn.linear_model import LogisticRegression

    matchups, feats, outcomes, models = _fastchat_preprocess(df)
    n, N = len(models), len(df)
    X = np.zeros((N, n + feats.shape[1]))
    X[np.arange(N), matchups[:, 0]] = math.log(10)
    X[np.arange(N), matchups[:, 1]] = -math.log(10)
    X[:, n:] = feats
    X2 = np.vstack([X, X])
    y2 = np.concatenate([outcomes == 1.0, outcomes >= 0.5]).astype(int)  # a tie = one win and one loss
    lr = LogisticRegression(fit_intercept=False, C=1.0, tol=1e-10, max_iter=10_000)
    lr.fit(X2, y2)
    w = lr.coef_[0]
    return pd.Series(w[:n] * 400 + 1000, index=models), w[n:]


@pytest.fixture(scope="module")
def battles():
    return style_battles()


def test_matches_fastchat_compute_style_control(battles):
    ours = style_control(battles)
    ref_scores, ref_coef = _fastchat_style_control(battles)
    mine = pd.Series(ours.scores, index=ours.systems)
    assert np.abs(mine - ref_scores[mine.index]).max() < 0.5
    assert np.abs(ours.coefficients - ref_coef).max() < 1e-3
    # ours is the optimum of FastChat's own objective: its gradient vanishes there, and the
    # objective is no larger than at FastChat's (early-stopped) L-BFGS solution
    matchups, feats, outcomes, models = _fastchat_preprocess(battles)
    order = [ours.systems.index(m) for m in models]
    x = np.concatenate([(ours.scores[order] - 1000) / 400, ours.coefficients])
    loss, grad = _fastchat_loss(x, len(models), matchups, feats, outcomes, math.log(10.0), 0.5, 0.25)
    assert np.abs(grad).max() < 1e-6
    x_ref = np.concatenate([(ref_scores.to_numpy() - 1000) / 400, ref_coef])
    assert loss <= _fastchat_loss(x_ref, len(models), matchups, feats, outcomes, math.log(10.0), 0.5, 0.25)[0] + 1e-9
    assert ours.features == STYLE_V1


def test_matches_fastchat_logistic_regression_form(battles):
    ours = style_control(battles)
    ref_scores, ref_coef = _sklearn_style_control(battles)
    mine = pd.Series(ours.scores, index=ours.systems)
    assert np.abs(mine - ref_scores[mine.index]).max() < 0.5
    assert np.abs(ours.coefficients - ref_coef).max() < 1e-3


def test_recovers_the_generating_model(battles):
    ours = style_control(battles)
    r = (ours.scores - 1000) / 400
    # the ridge shrinks a little; differences between models are recovered to sampling error
    d_true = TRUE_R - TRUE_R.mean()
    d_est = pd.Series(r - r.mean(), index=ours.systems)[MODELS].to_numpy()
    assert np.abs(d_est - d_true).max() < 0.06
    assert abs(ours.coefficients[0] - TRUE_COEF[0]) < 0.1
    plain = pd.Series(ours.plain_scores, index=ours.systems)
    # long answers win: without style control, the verbose models look stronger
    assert plain["m5"] - plain["m0"] > pd.Series(ours.scores, index=ours.systems)["m5"] - \
        pd.Series(ours.scores, index=ours.systems)["m0"]


def test_bootstrap_intervals_contain_estimates_and_arena_rank(battles):
    out = style_control(battles, n_boot=30, seed=3)
    assert (out.ci_low <= out.scores + 1e-9).all() and (out.scores <= out.ci_high + 1e-9).all()
    assert (out.coef_low <= out.coefficients).all() and (out.coefficients <= out.coef_high).all()
    expected = 1 + (out.ci_low[None, :] > out.ci_high[:, None]).sum(axis=1)
    assert (out.arena_rank == expected).all()
    frame = out.to_frame()
    assert list(frame.columns) == ["system", "rating", "ci_low", "ci_high", "rank", "plain_rating", "plain_rank",
                                   "rank_delta"]
    assert (frame["rank_delta"] == frame["plain_rank"] - frame["rank"]).all()
    again = style_control(battles, n_boot=30, seed=3)
    np.testing.assert_allclose(again.ci_low, out.ci_low, rtol=1e-10)


def test_registered_method_through_aggregate_and_filters(battles):
    r = scorebench.aggregate(battles, "bradley_terry_style", n_boot=20, seed=0)
    frame = r.to_frame()
    assert {"ci_low", "ci_high", "rank_ub"} <= set(frame.columns)
    sc = style_control(battles)
    np.testing.assert_allclose([r.score_of(s) for s in sc.systems], sc.scores, atol=1e-6)
    assert set(r.details["coefficients"]) == set(STYLE_V1)
    anony = scorebench.aggregate(battles, "bradley_terry_style", n_boot=0, anony=True, language="English")
    subset = battles[battles.anony & (battles.language == "English")]
    ref, _ = _fastchat_style_control(subset, maxiter=10_000, gtol=1e-10)
    np.testing.assert_allclose([anony.score_of(s) for s in ref.index], ref.to_numpy(), atol=0.05)


def test_anchor_and_errors(battles):
    out = style_control(battles, anchor="m3", anchor_rating=1114.0)
    assert out.scores[out.systems.index("m3")] == pytest.approx(1114.0)
    base = style_control(battles)
    np.testing.assert_allclose(np.diff(out.scores), np.diff(base.scores), atol=1e-9)
    with pytest.raises(InputError, match="anchor"):
        style_control(battles, anchor="nope")
    with pytest.raises(InputError, match="paired"):
        style_control(battles.drop(columns=["style_bold_count_b"]))
    flat = battles.assign(style_header_count_a=1, style_header_count_b=1)
    with pytest.raises(InputError, match="do not vary"):
        style_control(flat)
    with pytest.raises(InputError, match="no battle left"):
        style_control(battles, language="Klingon")
    with pytest.raises(InputError, match="reg"):
        style_control(battles, reg=0.0)


def test_cli_aggregate(tmp_path, battles):
    from click.testing import CliRunner

    from scorebench.cli import cli

    path = tmp_path / "battles.csv"
    battles.head(1500).to_csv(path, index=False)
    result = CliRunner().invoke(cli, ["aggregate", str(path), "-m", "bradley_terry_style", "-p", "anony=true",
                                      "--bootstrap", "20", "--output", str(tmp_path / "out.csv")])
    assert result.exit_code == 0, result.output
    out = pd.read_csv(tmp_path / "out.csv")
    assert set(out["system"]) == set(MODELS) and "rank_ub" in out.columns
    bad = CliRunner().invoke(cli, ["aggregate", str(path), "-m", "bradley_terry_style", "-p", "features=nope"])
    assert bad.exit_code == 2 and "error:" in bad.output and "Traceback" not in bad.output


def test_from_a_clean_battle_file_with_nested_counts(tmp_path, battles):
    """The arena reader's style columns (nested per-level counts summed, as FastChat does) feed the method."""
    import json

    from scorebench.io.readers import arena

    sub = battles.head(800)
    records = []
    for i, row in enumerate(sub.itertuples(index=False)):
        meta = {"sum_assistant_a_tokens": int(row.style_sum_assistant_a_tokens),
                "sum_assistant_b_tokens": int(row.style_sum_assistant_b_tokens)}
        for f in ("header_count", "list_count", "bold_count"):
            for side in ("a", "b"):
                total = int(getattr(row, f"style_{f}_{side}"))
                meta[f"{f}_{side}"] = {"h1": total // 2, "h2": total - total // 2} if f == "header_count" else total
        records.append({"question_id": str(i), "model_a": row.model_a, "model_b": row.model_b,
                        "winner": row.winner, "anony": bool(row.anony), "language": row.language,
                        "conv_metadata": meta})
    path = tmp_path / "clean_battle_20240101.json"
    path.write_text(json.dumps(records))
    table = arena.read(path, anony=True)
    ours = style_control(table)
    ref_scores, ref_coef = _fastchat_style_control(sub[sub.anony].reset_index(drop=True))
    mine = pd.Series(ours.scores, index=ours.systems)
    assert np.abs(mine - ref_scores[mine.index]).max() < 0.5
    assert np.abs(ours.coefficients - ref_coef).max() < 1e-3


def test_cli_from_arena_file(tmp_path, battles):
    import json

    from click.testing import CliRunner

    from scorebench.cli import cli

    records = [{"question_id": str(i), "model_a": r.model_a, "model_b": r.model_b, "winner": r.winner,
                "anony": bool(r.anony), "language": r.language,
                "conv_metadata": {k[6:]: int(getattr(r, k)) for k in battles.columns if k.startswith("style_")}}
               for i, r in enumerate(battles.head(1000).itertuples(index=False))]
    path = tmp_path / "clean_battle_20240101.json"
    path.write_text(json.dumps(records))
    out = tmp_path / "ratings.csv"
    result = CliRunner().invoke(cli, ["aggregate", str(path), "--from", "arena", "--from-option", "anony=true",
                                      "-m", "bradley_terry_style", "-m", "bradley_terry", "--output", str(out)])
    assert result.exit_code == 0, result.output
    frame = pd.read_csv(out)
    assert set(frame["method"]) == {"bradley_terry_style", "bradley_terry"}
    ours = style_control(battles.head(1000)[battles.head(1000).anony])
    got = frame[frame.method == "bradley_terry_style"].set_index("system")["score"]
    np.testing.assert_allclose(got[list(ours.systems)].to_numpy(), ours.scores, atol=1e-6)


def test_plain_ratings_are_fastchats_unpenalised_fit(battles):
    """FastChat's compute_mle_elo: LogisticRegression(fit_intercept=False, penalty=None) on the plain matchups."""
    from sklearn.linear_model import LogisticRegression

    ours = style_control(battles)
    matchups, _, outcomes, models = _fastchat_preprocess(battles)
    n, N = len(models), len(battles)
    X = np.zeros((N, n))
    X[np.arange(N), matchups[:, 0]] = math.log(10)
    X[np.arange(N), matchups[:, 1]] = -math.log(10)
    X2 = np.vstack([X, X])
    y2 = np.concatenate([outcomes == 1.0, outcomes >= 0.5]).astype(int)  # a tie = one win and one loss
    lr = LogisticRegression(fit_intercept=False, C=np.inf, tol=1e-12, max_iter=100_000).fit(X2, y2)
    ref = pd.Series(lr.coef_[0] * 400 + 1000, index=models)
    plain = pd.Series(ours.plain_scores, index=ours.systems)
    assert np.abs(plain - ref[plain.index]).max() < 1e-4
    # the ridge (reg=0.5) fit is visibly different: the plain column is not penalised
    ridge = scorebench.aggregate.style_control.fit_contextual_bt(
        np.array([ours.systems.index(m) for m in np.array(models)[matchups[:, 0]]]),
        np.array([ours.systems.index(m) for m in np.array(models)[matchups[:, 1]]]),
        np.zeros((N, 0)), outcomes, n, alpha=math.log(10), reg=0.5) * 400 + 1000
    assert np.abs(ridge - ours.plain_scores).max() > 1e-3
