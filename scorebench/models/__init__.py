"""Running torch models to produce scorebench tables: features, logits, probabilities.

torch is imported only when a function here runs, never at ``import scorebench``.

* :func:`resolve_device` — ``auto`` picks CUDA, then the CPU;
* :func:`load_extractor` — an ``nn.Module``, a TorchScript file or ``module:callable``,
  from local files only, with a weights + preprocessing fingerprint;
* :func:`run_model` — batched inference under ``torch.inference_mode`` (float16 autocast
  on GPU on request; deterministic algorithms on the CPU);
* :func:`features_table` — model outputs over a data file as a ``features`` table, which
  is what ``scorebench run`` writes;
* :mod:`scorebench.models.zoo` — extractors whose weights ship in installed packages
  (``scorebench.models.zoo:efficientnet_lite0``, 1280-d image features, offline).
"""

from __future__ import annotations

from scorebench.models.data import IMAGE_SUFFIXES, ModelInputs, load_inputs
from scorebench.models.device import DEVICES, resolve_device
from scorebench.models.extractor import Extractor, Preprocess, file_sha256, load_extractor, weights_fingerprint
from scorebench.models.inference import OUTPUTS, Features, extract, run_model
from scorebench.models.table import features_table, outputs_frame

__all__ = [
    "DEVICES", "OUTPUTS", "IMAGE_SUFFIXES", "Extractor", "Preprocess", "ModelInputs",
    "resolve_device", "load_extractor", "weights_fingerprint", "file_sha256", "load_inputs",
    "run_model", "extract", "Features", "features_table", "outputs_frame",
]
