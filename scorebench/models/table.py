"""Model outputs as scorebench tables (the ``features`` kind, or class probabilities)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scorebench.models.data import load_inputs
from scorebench.models.device import resolve_device
from scorebench.models.extractor import Extractor, Preprocess, load_extractor
from scorebench.models.inference import run_model

__all__ = ["features_table", "outputs_frame"]

_PREFIX = {"features": "f", "spatial": "s", "logits": "logit_", "probs": "p_"}


def outputs_frame(values: np.ndarray, ids: Any, extractor: Extractor, *, output: str = "features",
                  system: str | None = None) -> pd.DataFrame:
    """Lay model outputs out as a table: ``id``, optional ``system``, output columns, ``extractor``.

    ``features`` become ``f0..f{d-1}`` (the ``features`` kind), ``spatial`` ``s0..`` (for
    ``sfid``), ``logits`` ``logit_<j>``,
    ``probs`` ``p_<j>`` and ``predictions`` one ``prediction`` column. ``.attrs`` records the
    extractor name, fingerprint and preprocessing.
    """
    if output == "predictions":
        data = {"prediction": values[:, 0].astype(np.int64)}
    else:
        prefix = _PREFIX[output]
        data = {f"{prefix}{j}": values[:, j] for j in range(values.shape[1])}
    frame = pd.DataFrame(data)
    frame.insert(0, "id", np.asarray(ids))
    if system is not None:
        frame.insert(1, "system", str(system))
    frame["extractor"] = extractor.fingerprint
    frame.attrs.update({**extractor.metadata(), "output": output})
    return frame


def features_table(model_spec: Any, data_path: str | Path, *, device: str = "auto", batch_size: int = 64,
                   output: str = "features", system: str | None = None, amp: bool = False,
                   preprocess: Preprocess | None = None, expected_sha256: str | None = None,
                   trust: bool = False) -> pd.DataFrame:
    """Run a model over the samples in ``data_path`` and return its outputs as a table.

    Parameters
    ----------
    model_spec : nn.Module, TorchScript path or ``module:callable``
        See :func:`scorebench.models.load_extractor`; loaded from local files only.
    data_path : path
        ``.npy``, ``.npz``, a table of numeric columns, or a folder of images
        (see :func:`scorebench.models.load_inputs`).
    device : {"auto", "cpu", "cuda"}
        ``auto`` uses CUDA when present.
    batch_size : int
    output : {"features", "spatial", "logits", "probs", "predictions"}
    system : str, optional
        Adds a ``system`` column with this value (e.g. ``"real"`` for the reference set), so
        tables of several generators concatenate into one ``features`` table.
    amp : bool
        float16 autocast on CUDA.
    preprocess : Preprocess, optional
    expected_sha256 : str, optional
        Refuse a model file whose SHA-256 differs.
    trust : bool
        Run a model file without a SHA-256 pin. A model is code: see
        :func:`scorebench.models.load_extractor`.

    Returns
    -------
    DataFrame
        ``id``, ``system`` (if given), ``f0..`` (or ``logit_*``/``p_*``/``prediction``) and
        ``extractor`` (the weights + preprocessing fingerprint); ``.attrs`` has the details.

    Examples
    --------
    >>> import numpy as np, torch, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "x.npy")
    >>> np.save(path, np.ones((3, 2, 2), dtype=np.float32))
    >>> t = features_table(torch.nn.Flatten(), path, device="cpu", system="real")
    >>> list(t.columns)
    ['id', 'system', 'f0', 'f1', 'f2', 'f3', 'extractor']
    """
    dev = resolve_device(device)
    extractor = load_extractor(model_spec, preprocess=preprocess, expected_sha256=expected_sha256, trust=trust)
    inputs = load_inputs(data_path)
    values = run_model(extractor, inputs.values, device=dev, batch_size=batch_size, amp=amp, output=output)
    frame = outputs_frame(values, inputs.ids, extractor, output=output, system=system)
    frame.attrs.update({"data": inputs.source, "device": str(dev), "amp": bool(amp and dev.type == "cuda")})
    return frame
