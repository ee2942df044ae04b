"""scorebench.models: devices, local extractors and fingerprints, batched inference, `scorebench run`."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

torch = pytest.importorskip("torch")

from click.testing import CliRunner  # noqa: E402

from scorebench.cli import cli  # noqa: E402
from scorebench.core.errors import InputError  # noqa: E402
from scorebench.io.tables import read_table  # noqa: E402
from scorebench.models import (  # noqa: E402
    Preprocess, features_table, file_sha256, load_extractor, load_inputs, resolve_device, run_model,
    weights_fingerprint,
)

_NET_SOURCE = '''
import torch


class SmallNet(torch.nn.Module):
    def __init__(self, classes: int = 4):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 6, 3, padding=1)
        self.head = torch.nn.Linear(6, classes)

    def forward(self, x):
        h = torch.relu(self.conv(x)).mean(dim=(2, 3))
        return self.head(h)


def build():
    torch.manual_seed(0)
    return SmallNet()
'''


@pytest.fixture
def net_file(tmp_path):
    path = tmp_path / "smallnet.py"
    path.write_text(_NET_SOURCE)
    return path


@pytest.fixture
def scripted(net_file, tmp_path):
    module = load_extractor(f"{net_file}:build", trust=True).module
    path = tmp_path / "net.pt"
    torch.jit.script(module).save(str(path))
    return path


def _images(n, seed, shift=0.0):
    return (np.random.default_rng(seed).uniform(0, 1, size=(n, 3, 8, 8)) + shift).astype(np.float32)


def test_import_scorebench_models_does_not_import_torch():
    code = "import sys, scorebench, scorebench.models, scorebench.cli; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"


def test_resolve_device():
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert resolve_device("cpu").type == "cpu"
    with pytest.raises(InputError, match="device"):
        resolve_device("tpu")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="no CUDA"):
            resolve_device("cuda")


def test_extractor_fingerprint_covers_the_program(net_file, scripted):
    from_callable = load_extractor(f"{net_file}:build", trust=True)
    from_file = load_extractor(scripted, trust=True)
    # Same weights, different programs (TorchScript archive vs Python source): not comparable.
    assert from_callable.fingerprint != from_file.fingerprint
    assert from_file.name == "net.pt"
    assert load_extractor(scripted, trust=True).fingerprint == from_file.fingerprint
    other = load_extractor(torch.nn.Linear(3, 2))
    assert other.fingerprint != from_file.fingerprint
    resized = load_extractor(scripted, preprocess=Preprocess(size=(16, 16)), trust=True)
    assert resized.fingerprint != from_file.fingerprint
    # nn.Module instances (no program file): the weights + preprocessing fingerprint
    assert weights_fingerprint(from_callable.module) == load_extractor(from_callable.module).fingerprint


def test_extractor_refuses_remote_and_wrong_hash(scripted, tmp_path):
    with pytest.raises(InputError, match="never downloaded"):
        load_extractor("https://example.com/model.pt")
    with pytest.raises(InputError, match="SHA-256"):
        load_extractor(scripted, expected_sha256="0" * 64)
    assert load_extractor(scripted, expected_sha256=file_sha256(scripted)).name == "net.pt"
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a model")
    with pytest.raises(InputError, match="TorchScript"):
        load_extractor(junk, trust=True)


def test_run_model_outputs_and_determinism(scripted):
    x = _images(37, 0)
    logits = run_model(scripted, x, device="cpu", batch_size=8, output="logits", trust=True)
    assert logits.shape == (37, 4) and logits.dtype == np.float64
    again = run_model(scripted, x, device="cpu", batch_size=8, output="logits", trust=True)
    np.testing.assert_array_equal(logits, again)
    other_batch = run_model(scripted, x, device="cpu", batch_size=37, output="logits", trust=True)
    np.testing.assert_allclose(logits, other_batch, rtol=1e-5, atol=1e-6)
    probs = run_model(scripted, x, device="cpu", output="probs", trust=True)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-6)
    preds = run_model(scripted, x, device="cpu", output="predictions", trust=True)
    np.testing.assert_array_equal(preds[:, 0], logits.argmax(axis=1))
    with pytest.raises(InputError, match="output"):
        run_model(scripted, x, output="embeddings", trust=True)


def test_preprocess_is_applied():
    ex = load_extractor(torch.nn.Flatten(), preprocess=Preprocess(scale=2.0, mean=(1.0,), std=(4.0,)))
    out = run_model(ex, np.full((2, 1, 2, 2), 3.0), device="cpu")
    np.testing.assert_allclose(out, 1.25)


def test_load_inputs_formats(tmp_path):
    x = _images(5, 1)
    np.save(tmp_path / "x.npy", x)
    np.savez(tmp_path / "x.npz", x=x)
    pd.DataFrame({"id": list("abcde"), "a": [1.0] * 5, "b": range(5)}).to_csv(tmp_path / "t.csv", index=False)
    assert load_inputs(tmp_path / "x.npy").values.shape == (5, 3, 8, 8)
    assert load_inputs(tmp_path / "x.npz").values.shape == (5, 3, 8, 8)
    table = load_inputs(tmp_path / "t.csv")
    assert table.values.shape == (5, 2) and list(table.ids) == list("abcde")
    pil = pytest.importorskip("PIL.Image")
    folder = tmp_path / "imgs"
    folder.mkdir()
    for i in range(3):
        pil.fromarray(np.full((6, 5, 3), 40 * i, dtype=np.uint8)).save(folder / f"img{i}.png")
    imgs = load_inputs(folder)
    assert imgs.values.shape == (3, 3, 6, 5) and list(imgs.ids) == ["img0.png", "img1.png", "img2.png"]
    assert imgs.values[2].max() == 80.0


def test_features_table_columns(scripted, tmp_path):
    np.save(tmp_path / "x.npy", _images(6, 2))
    t = features_table(scripted, tmp_path / "x.npy", device="cpu", output="probs", system="gen", trust=True)
    assert list(t.columns) == ["id", "system", "p_0", "p_1", "p_2", "p_3", "extractor"]
    assert t.attrs["device"] == "cpu" and t.attrs["extractor_name"] == "net.pt"


def test_cli_run_then_evaluate_fid(scripted, tmp_path):
    np.save(tmp_path / "real.npy", _images(60, 3))
    np.save(tmp_path / "fake.npy", _images(50, 4, shift=0.5))
    runner = CliRunner()
    for name, system in (("real", "real"), ("fake", "gan")):
        result = runner.invoke(cli, ["run", "--model", str(scripted), "--trust-model", "--data", str(tmp_path / f"{name}.npy"),
                                     "--output", str(tmp_path / f"{name}.csv"), "--device", "cpu",
                                     "--batch-size", "16", "--system", system, "--what", "logits"])
        assert result.exit_code == 0, result.output
    real, fake = read_table(tmp_path / "real.csv"), read_table(tmp_path / "fake.csv")
    assert [c for c in real.columns if c.startswith("logit_")] == [f"logit_{j}" for j in range(4)]
    result = runner.invoke(cli, ["run", "--model", str(scripted), "--trust-model", "--data", str(tmp_path / "real.npy"),
                                 "--output", str(tmp_path / "real_f.csv"), "--system", "real"])
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["run", "--model", str(scripted), "--trust-model", "--data", str(tmp_path / "fake.npy"),
                                 "--output", str(tmp_path / "fake_f.csv"), "--system", "gan"])
    feats = pd.concat([read_table(tmp_path / "real_f.csv"), read_table(tmp_path / "fake_f.csv")])
    assert feats["extractor"].nunique() == 1
    feats.to_csv(tmp_path / "both.csv", index=False)
    result = runner.invoke(cli, ["evaluate", str(tmp_path / "both.csv"), "--metric", "fid", "--bootstrap", "0"])
    assert result.exit_code == 0, result.output
    assert "gan" in result.output and "fid" in result.output
    from scorebench.metrics.generative import fid

    real_f = feats[feats.system == "real"].filter(regex=r"^f\d+$").to_numpy()
    fake_f = feats[feats.system == "gan"].filter(regex=r"^f\d+$").to_numpy()
    assert fid(real_f, fake_f) > 0
    bad = runner.invoke(cli, ["run", "--model", "missing.pt", "--data", str(tmp_path / "real.npy"),
                              "--output", str(tmp_path / "x.csv")])
    assert bad.exit_code == 2 and "never downloaded" in bad.output
    assert not (tmp_path / "x.csv").exists()


def test_cli_evaluate_runs_the_model_in_one_go(scripted, tmp_path):
    np.save(tmp_path / "real.npy", _images(60, 3))
    np.save(tmp_path / "gan.npy", _images(50, 4, shift=0.5))
    np.save(tmp_path / "copy.npy", _images(50, 3))
    out = tmp_path / "scores.csv"
    result = CliRunner().invoke(cli, ["evaluate", "--model", str(scripted), "--trust-model", "--reference", str(tmp_path / "real.npy"),
                                      "--data", str(tmp_path / "gan.npy"), "--data", str(tmp_path / "copy.npy"),
                                      "--device", "cpu", "-m", "fid", "--bootstrap", "0", "-o", str(out)])
    assert result.exit_code == 0, result.output
    scores = pd.read_csv(out, comment="#").set_index("system")
    assert scores.loc["gan", "value"] > scores.loc["copy", "value"] >= 0
    missing = CliRunner().invoke(cli, ["evaluate", "--model", str(scripted), "--trust-model", "--data", str(tmp_path / "gan.npy"),
                                       "-m", "fid"])
    assert missing.exit_code == 2 and "--reference" in missing.output


def test_extract_carries_fingerprint_into_metrics(scripted, net_file):
    from scorebench.metrics.generative import fid_details
    from scorebench.models import extract

    real = extract(scripted, _images(40, 5), device="cpu", trust=True)
    fake = extract(scripted, _images(40, 6, shift=0.3), device="cpu", trust=True)
    result = fid_details(real, fake)
    assert result.extractor == real.extractor and result.value > 0
    other = extract(torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(192, 4)), _images(40, 6), device="cpu")
    with pytest.raises(InputError, match="different extractors"):
        fid_details(real, other)
