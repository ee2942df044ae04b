"""Batched inference: ``torch.inference_mode``, optional mixed precision on GPU, deterministic CPU."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from scorebench.core.errors import InputError
from scorebench.models.device import resolve_device
from scorebench.models.extractor import Extractor, load_extractor

__all__ = ["OUTPUTS", "Features", "extract", "run_model"]

OUTPUTS = ("features", "spatial", "logits", "probs", "predictions")


@dataclass(frozen=True)
class Features:
    """Model outputs with the identity of the extractor that produced them.

    The generative metrics accept it wherever they accept a feature array, and refuse to
    compare two :class:`Features` whose ``extractor`` fingerprints differ; results such as
    :class:`~scorebench.metrics.generative.FIDResult` record the fingerprint.
    """

    features: np.ndarray = field(repr=False)
    extractor: str
    name: str
    preprocess: str

    @property
    def shape(self) -> tuple[int, ...]:
        return self.features.shape


@contextlib.contextmanager
def _deterministic(torch: Any, enabled: bool):
    if not enabled:
        yield
        return
    previous = torch.are_deterministic_algorithms_enabled()
    warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(previous, warn_only=warn_only)


def _first_tensor(out: Any, torch: Any) -> Any:
    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, (tuple, list)) and out and isinstance(out[0], torch.Tensor):
        return out[0]
    if isinstance(out, dict) and out:
        return _first_tensor(next(iter(out.values())), torch)
    raise InputError(f"model output: expected a tensor (or a tuple/dict whose first item is one), "
                     f"got {type(out).__name__}")


def _check_settings(output: str, batch_size: Any) -> None:
    """Refuse an unknown ``output`` or a ``batch_size`` that is not an integer >= 1."""
    if output not in OUTPUTS:
        raise InputError(f"output: expected one of {', '.join(OUTPUTS)}, got {output!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise InputError(f"batch_size: expected an integer >= 1, got {batch_size!r}")


def _check_data(data: Any) -> np.ndarray:
    """``data`` as an array of at least one numeric sample, else one :class:`InputError`."""
    array = np.asarray(data)
    if array.ndim < 1 or array.shape[0] == 0:
        raise InputError(f"data: expected at least one sample, got shape {array.shape}")
    if array.dtype.kind not in "biuf":
        raise InputError(f"data: expected numbers, got dtype {array.dtype}")
    return array


def run_model(model: Any, data: Any, *, device: Any = "auto", batch_size: int = 64, amp: bool = False,
              output: str = "features", trust: bool = False, expected_sha256: str | None = None) -> np.ndarray:
    """Run ``model`` over ``data`` in batches and return its outputs as float64 ``(n, k)``.

    Parameters
    ----------
    model : Extractor, nn.Module, TorchScript path or ``module:callable``
    data : array_like of shape (n, ...)
        Model inputs (images as (n, C, H, W)); converted to float32 tensors batch by batch.
    device : {"auto", "cpu", "cuda"} or "cuda:<i>"
    batch_size : int
    amp : bool
        Mixed precision (float16 autocast) on CUDA; ignored on the CPU, which always runs
        in float32 with deterministic algorithms.
    output : {"features", "spatial", "logits", "probs", "predictions"}
        ``features``/``spatial``/``logits``: the flattened output; ``probs``: its softmax;
        ``predictions``: the argmax (shape ``(n, 1)``).
    trust, expected_sha256 : optional
        For a model given as a file or ``module:callable``: a model is code, so it runs
        only when pinned or trusted (see :func:`~scorebench.models.load_extractor`).

    Examples
    --------
    >>> import numpy as np, torch
    >>> run_model(torch.nn.Flatten(), np.ones((5, 2, 2)), device="cpu", batch_size=2).shape
    (5, 4)
    """
    import torch

    _check_settings(output, batch_size)
    extractor = model if isinstance(model, Extractor) else load_extractor(model, trust=trust,
                                                                          expected_sha256=expected_sha256)
    dev = resolve_device(device)
    array = _check_data(data)
    module = extractor.module.to(dev)
    module.eval()
    use_amp = bool(amp) and dev.type == "cuda"
    chunks: list[np.ndarray] = []
    autocast = (torch.autocast(device_type="cuda", dtype=torch.float16) if use_amp
                else contextlib.nullcontext())
    with torch.inference_mode(), _deterministic(torch, dev.type == "cpu"), autocast:
        for start in range(0, array.shape[0], int(batch_size)):
            batch = torch.as_tensor(np.ascontiguousarray(array[start:start + batch_size]),
                                    dtype=torch.float32).to(dev, non_blocking=True)
            out = _first_tensor(module(extractor.preprocess.apply(batch)), torch)
            out = out.float().reshape(out.shape[0], -1)
            if output == "probs":
                out = torch.softmax(out, dim=1)
            elif output == "predictions":
                out = out.argmax(dim=1, keepdim=True).float()
            chunks.append(out.to("cpu", torch.float64).numpy())
    result = np.concatenate(chunks, axis=0)
    if result.shape[0] != array.shape[0]:
        raise InputError(f"model returned {result.shape[0]} rows for {array.shape[0]} inputs; "
                         "expected one output per sample")
    if not np.all(np.isfinite(result)):
        raise InputError("model output contains NaN or infinite values")
    return result


def extract(model: Any, data: Any, *, device: Any = "auto", batch_size: int = 64, amp: bool = False,
            output: str = "features", trust: bool = False, expected_sha256: str | None = None) -> Features:
    """:func:`run_model`, returning :class:`Features` that carry the extractor fingerprint.

    ``trust``/``expected_sha256``: as :func:`run_model` (a model file is code).

    Examples
    --------
    >>> import numpy as np, torch
    >>> f = extract(torch.nn.Flatten(), np.ones((3, 2)), device="cpu")
    >>> f.shape, f.extractor.startswith("sha256:")
    ((3, 2), True)
    """
    extractor = model if isinstance(model, Extractor) else load_extractor(model, trust=trust,
                                                                          expected_sha256=expected_sha256)
    values = run_model(extractor, data, device=device, batch_size=batch_size, amp=amp, output=output)
    return Features(values, extractor.fingerprint, extractor.name, extractor.preprocess.describe())
