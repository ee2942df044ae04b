"""Pluggable feature extractors, loaded only from local files, with a weights fingerprint.

An extractor spec is one of

* an ``torch.nn.Module`` instance;
* the path of a TorchScript file (``model.pt``), optionally checked against a SHA-256;
* ``package.module:callable`` or ``path/to/file.py:callable``, where the callable returns an
  ``nn.Module`` (called with no arguments) — it must load its weights from local files.

Nothing is ever downloaded: there is no hub or URL spec, and runs happen offline. The
fingerprint hashes every tensor of the module's state dict (names, dtypes, shapes and
bytes) together with the preprocessing description, so two feature tables are comparable
exactly when their fingerprints match.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError

__all__ = ["Preprocess", "Extractor", "load_extractor", "weights_fingerprint", "file_sha256"]


@dataclass(frozen=True)
class Preprocess:
    """Input preprocessing applied on the device before the model: ``(x * scale - mean) / std``.

    Attributes
    ----------
    scale : float
        Multiplier applied first (``1/255`` turns 8-bit images into [0, 1]).
    mean, std : tuple of float, optional
        Per-channel normalisation (axis 1); ``None`` skips it.
    size : (int, int), optional
        Resize images (N, C, H, W) to this height and width first.
    resize_mode : str
        ``torch.nn.functional.interpolate`` mode used when resizing (recorded, since FID
        values depend on it).
    """

    scale: float = 1.0
    mean: tuple[float, ...] | None = None
    std: tuple[float, ...] | None = None
    size: tuple[int, int] | None = None
    resize_mode: str = "bilinear"

    def describe(self) -> str:
        """A canonical one-line description (part of the fingerprint)."""
        parts = [f"scale={self.scale!r}"]
        if self.size is not None:
            parts.append(f"resize={self.size[0]}x{self.size[1]}/{self.resize_mode}")
        if self.mean is not None:
            parts.append(f"mean={list(self.mean)!r}")
        if self.std is not None:
            parts.append(f"std={list(self.std)!r}")
        return ";".join(parts)

    def apply(self, x: Any) -> Any:
        """Apply to a float tensor batch."""
        import torch
        import torch.nn.functional as F

        if self.size is not None:
            if x.ndim != 4:
                raise InputError(f"preprocess: resizing needs image batches (N, C, H, W), got shape {tuple(x.shape)}")
            x = F.interpolate(x, size=tuple(self.size), mode=self.resize_mode,
                              **({"align_corners": False} if self.resize_mode in ("bilinear", "bicubic") else {}))
        if self.scale != 1.0:
            x = x * self.scale
        shape = (1, -1) + (1,) * max(x.ndim - 2, 0)
        if self.mean is not None:
            x = x - torch.as_tensor(self.mean, dtype=x.dtype, device=x.device).reshape(shape)
        if self.std is not None:
            x = x / torch.as_tensor(self.std, dtype=x.dtype, device=x.device).reshape(shape)
        return x


@dataclass(frozen=True)
class Extractor:
    """A model ready to run, with where it came from and its fingerprint.

    Attributes
    ----------
    module : torch.nn.Module
    name : str
        The spec it was loaded from (file name, ``module:callable`` or class name).
    preprocess : Preprocess
    fingerprint : str
        ``"sha256:<16 hex digits>"`` of the weights and the preprocessing description.
    """

    module: Any = field(repr=False)
    name: str
    preprocess: Preprocess
    fingerprint: str

    def metadata(self) -> dict[str, str]:
        """What a written table records about the extractor."""
        return {"extractor": self.fingerprint, "extractor_name": self.name,
                "preprocess": self.preprocess.describe()}


def file_sha256(path: str | Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def weights_fingerprint(module: Any, preprocess: Preprocess | None = None) -> str:
    """``sha256:<16 hex>`` over the state dict (sorted names, dtypes, shapes, bytes) + preprocessing.

    Examples
    --------
    >>> import torch
    >>> torch.manual_seed(0) is not None
    True
    >>> a = torch.nn.Linear(3, 2)
    >>> weights_fingerprint(a) == weights_fingerprint(a)
    True
    >>> weights_fingerprint(a) == weights_fingerprint(a, Preprocess(scale=0.5))
    False
    """
    import torch

    digest = hashlib.sha256()
    for name, tensor in sorted(module.state_dict().items()):
        t = tensor.detach().to("cpu").contiguous()
        digest.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        digest.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    digest.update((preprocess or Preprocess()).describe().encode())
    return "sha256:" + digest.hexdigest()[:16]


def _load_callable(spec: str) -> Any:
    target, _, attr = spec.rpartition(":")
    if target.endswith(".py"):
        path = Path(target)
        if not path.is_file():
            raise InputError(f"model {spec!r}: file {target!r} not found")
        mod_name = f"_scorebench_model_{hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]}"
        module_spec = importlib.util.spec_from_file_location(mod_name, path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[mod_name] = module
        module_spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise InputError(f"model {spec!r}: cannot import {target!r} ({exc})") from None
    try:
        obj = getattr(module, attr)
    except AttributeError:
        raise InputError(f"model {spec!r}: {target!r} has no attribute {attr!r}") from None
    return obj


def load_extractor(spec: Any, *, preprocess: Preprocess | None = None,
                   expected_sha256: str | None = None) -> Extractor:
    """Load an extractor from a module, a TorchScript file or ``module:callable``.

    Parameters
    ----------
    spec : nn.Module, path or str
    preprocess : Preprocess, optional
        Defaults to the module's ``scorebench_preprocess`` attribute (a :class:`Preprocess`
        or a dict of its fields) when it has one, else no preprocessing.
    expected_sha256 : str, optional
        For a file spec: refuse the file unless its SHA-256 matches (e.g. the standard FID
        Inception weights).

    Examples
    --------
    >>> import torch
    >>> ex = load_extractor(torch.nn.Flatten())
    >>> ex.name, ex.fingerprint.startswith("sha256:")
    ('Flatten', True)
    """
    import torch

    if isinstance(spec, Extractor):
        return spec
    if isinstance(spec, torch.nn.Module):
        module, name = spec, type(spec).__name__
    elif isinstance(spec, (str, Path)):
        text = str(spec)
        path = Path(text)
        if path.is_file():
            if expected_sha256 is not None:
                actual = file_sha256(path)
                if actual.lower() != expected_sha256.strip().lower():
                    raise InputError(f"model file {text!r}: SHA-256 {actual} does not match the expected "
                                     f"{expected_sha256}; refusing to use different weights")
            try:
                module = torch.jit.load(str(path), map_location="cpu")
            except (RuntimeError, ValueError) as exc:
                raise InputError(f"model file {text!r} is not a TorchScript archive ({str(exc).splitlines()[0]}); "
                                 "save it with torch.jit.script(model).save(path), or pass module:callable") from None
            name = path.name
        elif ":" in text and not text.startswith(("http:", "https:")):
            if expected_sha256 is not None:
                raise InputError("expected_sha256 applies to a model file, not to module:callable")
            obj = _load_callable(text)
            module = obj() if callable(obj) and not isinstance(obj, torch.nn.Module) else obj
            if isinstance(module, Extractor):
                return module
            if not isinstance(module, torch.nn.Module):
                raise InputError(f"model {text!r}: expected the callable to return a torch.nn.Module, "
                                 f"got {type(module).__name__}")
            name = text
        else:
            raise InputError(f"model {text!r}: not a file and not module:callable; models are loaded only "
                             "from local files (TorchScript .pt) or importable code, never downloaded")
    else:
        raise InputError(f"model: expected an nn.Module, a TorchScript file or module:callable, got {spec!r}")
    if preprocess is None:
        attached = getattr(module, "scorebench_preprocess", None)
        preprocess = Preprocess(**attached) if isinstance(attached, dict) else (attached or Preprocess())
    module.eval()
    return Extractor(module, name, preprocess, weights_fingerprint(module, preprocess))
