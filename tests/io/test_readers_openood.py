"""OpenOOD reader: score pickles in OpenOOD v1.5's layout, read without running code."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pytest
from sklearn import metrics

import scorebench
from scorebench.core.errors import InputError
from scorebench.io.tables import read_results

SCORES = Path(__file__).parents[1] / "fixtures" / "openood" / "scores"


def _openood_auroc(id_conf, ood_conf):
    """OpenOOD's definition: ROC of the OOD indicator (gt == -1) against -conf, integrated."""
    conf = np.concatenate([id_conf, ood_conf])
    indicator = np.r_[np.zeros(len(id_conf)), np.ones(len(ood_conf))]
    fpr, tpr, _ = metrics.roc_curve(indicator, -conf)
    return metrics.auc(fpr, tpr)


def test_auroc_per_dataset_matches_openood_definition():
    table = read_results(SCORES.parent)
    assert table.attrs["source_format"] == "openood" and table.attrs["trust_pickle"] is False
    assert set(table["task"]) == {"val", "near/cifar100", "near/tin", "far/mnist"}
    scores = scorebench.evaluate(table, ["auroc"], n_boot=0).set_index(["system", "task"])["value"]
    for name in ("msp", "energy"):
        with open(SCORES / f"{name}.pkl", "rb") as fh:
            raw = pickle.load(fh)  # our own fixture: trusted here
        id_conf = raw["id"]["test"][1]
        for group in ("near", "far"):
            for dataset, (_, conf, _) in raw["ood"][group].items():
                np.testing.assert_allclose(scores[(name, f"{group}/{dataset}")], _openood_auroc(id_conf, conf),
                                           rtol=0, atol=1e-12)


class _Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))


def test_restricted_unpickler_refuses_code(tmp_path):
    path = tmp_path / "evil.pkl"
    path.write_bytes(pickle.dumps({"id": {"test": [np.zeros(2), np.zeros(2), np.zeros(2)]}, "ood": _Evil()}))
    with pytest.raises(InputError, match=r"evil.pkl: refusing to load posix.system"):
        read_results(path)


def test_trust_pickle_and_truncated_file(tmp_path):
    assert len(read_results(SCORES / "msp.pkl", trust_pickle=True)) == len(read_results(SCORES / "msp.pkl"))
    path = tmp_path / "cut.pkl"
    path.write_bytes((SCORES / "msp.pkl").read_bytes()[:700])
    with pytest.raises(InputError, match="cut.pkl: not a readable pickle"):
        read_results(path, format="openood")


def test_ood_labels_checked(tmp_path):
    zeros = [np.zeros(3, int), np.ones(3), np.zeros(3, int)]
    path = tmp_path / "bad.pkl"
    path.write_bytes(pickle.dumps({"id": {"test": zeros}, "ood": {"near": {"x": zeros}}}))
    with pytest.raises(InputError, match=r"field 'ood.near.x\[2\]': OOD labels must all be -1"):
        read_results(path)


def test_seed_layout_reads_as_one_table_with_a_seed_column(tmp_path):
    import shutil

    import pandas as pd

    from scorebench.io.readers import detect_results_format

    run = tmp_path / "cifar10_resnet18_32x32_base_e100_lr0.1_default"
    for seed in (0, 1, 2):
        shutil.copytree(SCORES, run / f"s{seed}" / "scores")
    assert detect_results_format(run) == "openood"
    table = read_results(run)
    one = read_results(SCORES)
    assert sorted(table["seed"].unique()) == [0, 1, 2] and len(table) == 3 * len(one)
    assert table.attrs["seeds"] == [0, 1, 2]
    for seed in (0, 1, 2):
        part = table[table["seed"] == seed].drop(columns="seed").reset_index(drop=True)
        pd.testing.assert_frame_equal(part, one.reset_index(drop=True))


def _openood_v15(id_conf, ood_conf):
    """openood/evaluators/metrics.py (v1.5) auc_and_fpr_recall, written out: OOD positive, -conf as the score."""
    conf = np.concatenate([id_conf, ood_conf])
    ood = np.r_[np.zeros(len(id_conf)), np.ones(len(ood_conf))]
    fpr_list, tpr_list, _ = metrics.roc_curve(ood, -conf)
    fpr = fpr_list[np.argmax(tpr_list >= 0.95)]
    p_in, r_in, _ = metrics.precision_recall_curve(1 - ood, conf)
    p_out, r_out, _ = metrics.precision_recall_curve(ood, -conf)
    return fpr, metrics.auc(r_in, p_in), metrics.auc(r_out, p_out)


def test_openood_conventions_are_the_format_defaults():
    from click.testing import CliRunner

    from scorebench.cli import cli

    table = read_results(SCORES.parent)
    out = scorebench.evaluate(table, ["fpr_at_95_tpr", "aupr_in", "aupr_out"], n_boot=0)
    assert set(out["metric"]) == {"fpr_at_95_tpr(convention=openood)", "aupr_in(method=trapezoid)",
                                  "aupr_out(method=trapezoid)"}
    got = out.set_index(["system", "task", "metric"])["value"]
    with open(SCORES / "msp.pkl", "rb") as fh:
        raw = pickle.load(fh)
    id_conf = raw["id"]["test"][1]
    for group in ("near", "far"):
        for dataset, (_, conf, _) in raw["ood"][group].items():
            fpr, aupr_in, aupr_out = _openood_v15(id_conf, conf)
            key = ("msp", f"{group}/{dataset}")
            assert got[(*key, "fpr_at_95_tpr(convention=openood)")] == pytest.approx(fpr, abs=1e-15)
            assert got[(*key, "aupr_in(method=trapezoid)")] == pytest.approx(aupr_in, abs=1e-12)
            assert got[(*key, "aupr_out(method=trapezoid)")] == pytest.approx(aupr_out, abs=1e-12)
    # explicit parameters are kept as asked
    asked = scorebench.evaluate(table, "fpr_at_95_tpr(convention=first)", n_boot=0)
    assert set(asked["metric"]) == {"fpr_at_95_tpr"}  # the default convention, named plainly
    result = CliRunner().invoke(cli, ["evaluate", str(SCORES.parent), "-m", "fpr_at_95_tpr", "--bootstrap", "0"])
    assert result.exit_code == 0 and "convention=openood" in result.output
