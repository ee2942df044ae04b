"""Pluggable feature extractors, loaded only from local files, with a program fingerprint.

An extractor spec is one of

* an ``torch.nn.Module`` instance;
* the path of a TorchScript file (``model.pt``), checked against a SHA-256;
* ``package.module:callable`` or ``path/to/file.py:callable``, where the callable returns an
  ``nn.Module`` (called with no arguments) — it must load its weights from local files.

**A model is code.** Loading a TorchScript file runs code (``__setstate__`` at load time,
``forward`` on every batch), and a ``module:callable`` or ``file.py:callable`` spec imports
and runs Python. Run only models you trust: a file (TorchScript or ``.py``) is loaded only
when its SHA-256 matches ``expected_sha256`` or when ``trust=True`` says the caller trusts
it (CLI: ``--sha256 HEX`` or ``--trust-model``); an importable ``module:callable`` needs
``trust=True`` (or a SHA-256 of the module's source file) unless it is part of scorebench.
Nothing is ever downloaded: there is no hub or URL spec, and runs happen offline.

**What a pin covers.** A SHA-256 pins exactly one file: the TorchScript file, the
``file.py``, or the module's own source file. Python files that a pinned ``file.py`` or module
imports (a ``helper.py`` beside it) are *not* covered: they run with whatever bytes they hold
then. So the files are named: before a ``file.py`` runs, the sibling modules its source
imports are announced with their own SHA-256 ("not covered by the pin"), and after the
import every further Python file it loaded from outside the Python installation is named.
Pin a self-contained file (or vendor helpers into it) when the pin must cover everything.

The fingerprint covers the whole program, not only the weights: for a TorchScript file the
file's bytes (graph, code and weights), for a ``file.py:callable`` the source file's bytes
plus the state dict, for other modules the state dict (names, dtypes, shapes, bytes) — in
every case together with the preprocessing description. Two feature tables are comparable
exactly when their fingerprints match.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import io
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scorebench.core.errors import InputError

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


def _program_fingerprint(source_sha256: str, module: Any, preprocess: Preprocess) -> str:
    """``sha256:<16 hex>`` over a program file's SHA-256, the state dict and the preprocessing."""
    digest = hashlib.sha256(f"program|{source_sha256}|".encode())
    digest.update(weights_fingerprint(module, preprocess).encode())
    return "sha256:" + digest.hexdigest()[:16]


def _read_program(path: Path) -> bytes:
    from scorebench.core.resources import check_allocation

    check_allocation(path.stat().st_size, 2, f"model file {path}")
    return path.read_bytes()


def _pinned(path: Path, data: bytes, expected_sha256: str | None, trust: bool) -> str:
    """The SHA-256 of ``data``; raises unless it matches the pin or the caller trusts the file."""
    actual = hashlib.sha256(data).hexdigest()
    if expected_sha256 is not None:
        return _check_sha256(path, expected_sha256, "model file", actual=actual)
    if not trust:
        raise _untrusted("model file", path, actual)
    return actual


def _check_sha256(path: Path, expected: str, what: str, *, actual: str | None = None) -> str:
    actual = actual if actual is not None else file_sha256(path)
    wanted = str(expected).strip().lower()
    if len(wanted) != 64 or any(c not in "0123456789abcdef" for c in wanted):
        raise InputError(f"sha256 {expected!r}: expected 64 hexadecimal digits")
    if actual != wanted:
        raise InputError(f"{what} {str(path)!r}: SHA-256 {actual} does not match the expected "
                         f"{wanted}; refusing to run a different file")
    return actual


def _untrusted(what: str, path: Any, actual: str) -> InputError:
    return InputError(f"{what} {str(path)!r} is code and would run with your permissions; pin it with "
                      f"expected_sha256 (CLI: --sha256 {actual}) or pass trust=True (CLI: --trust-model) "
                      "if you trust it")


def _module_origin(target: str) -> Path | None:
    """The source file of an importable module, found without importing it (None if unknown)."""
    try:
        found = importlib.util.find_spec(target)
    except (ImportError, ValueError):
        return None
    origin = getattr(found, "origin", None) if found is not None else None
    return Path(origin) if origin and Path(origin).is_file() else None


def _load_callable(spec: str, *, trust: bool, expected_sha256: str | None) -> tuple[Any, str | None]:
    """The object named by ``module:callable`` / ``file.py:callable`` and its source file's SHA-256."""
    target, _, attr = spec.rpartition(":")
    if target.endswith(".py"):
        path = Path(target)
        if not path.is_file():
            raise InputError(f"model {spec!r}: file {target!r} not found")
        data = _read_program(path)
        source = _pinned(path, data, expected_sha256, trust)
        _announce(f"importing and running model code from {path} ({attr}), sha256 {source}"
                  + (" (the pin covers this file only)" if expected_sha256 is not None else ""))
        for sibling in _sibling_imports(path, data):
            _announce(f"{path} imports {sibling}, which no pin covers (sha256 {file_sha256(sibling)})")
        before = set(sys.modules)
        mod_name = f"_scorebench_model_{hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]}"
        module_spec = importlib.util.spec_from_file_location(mod_name, path)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[mod_name] = module
        try:  # run the very bytes that were hashed
            exec(compile(data, str(path), "exec"), module.__dict__)
        except SyntaxError as exc:
            raise InputError(f"model file {str(path)!r}: invalid Python ({exc.msg}, line {exc.lineno})") from None
        finally:
            _announce_loaded(path, set(sys.modules) - before - {mod_name})
    else:
        origin = _module_origin(target) if target else None
        ours = target == "scorebench" or target.startswith("scorebench.")
        source = file_sha256(origin) if origin is not None else None
        if expected_sha256 is not None:
            if origin is None:
                raise InputError(f"model {spec!r}: cannot find the source file of {target!r} to check its SHA-256")
            _check_sha256(origin, expected_sha256, "model module file")
        elif not (trust or ours):
            raise InputError(f"model {spec!r} imports and runs the module {target!r}"
                             f"{f' ({origin})' if origin else ''}; it is code and would run with your "
                             "permissions: pass trust=True (CLI: --trust-model) if you trust it")
        _announce(f"importing and running model code {spec}" + (f" from {origin}" if origin else "")
                  + (" (the pin covers this file only)" if expected_sha256 is not None else ""))
        before = set(sys.modules)
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise InputError(f"model {spec!r}: cannot import {target!r} ({exc})") from None
        finally:
            if not ours:
                _announce_loaded(origin or Path(target), set(sys.modules) - before - {target})
    try:
        obj = getattr(module, attr)
    except AttributeError:
        raise InputError(f"model {spec!r}: {target!r} has no attribute {attr!r}") from None
    return obj, (source if target.endswith(".py") else None)


def _sibling_imports(path: Path, data: bytes) -> list[Path]:
    """Python files beside ``path`` that its source imports (``import helper``, ``from helper import x``)."""
    import ast

    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError):
        return []
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    found = []
    for name in sorted(names):
        for candidate in (path.parent / f"{name}.py", path.parent / name / "__init__.py"):
            if candidate.is_file():
                found.append(candidate)
                break
    return found


def _announce_loaded(path: Path, new_modules: set[str]) -> None:
    """Name the Python files outside the Python installation that running ``path`` imported."""
    import os

    prefixes = tuple({os.path.realpath(p) + os.sep for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})
    own = os.path.realpath(Path(__file__).parents[1]) + os.sep
    for name in sorted(new_modules):
        file = getattr(sys.modules.get(name), "__file__", None)
        if not file:
            continue
        real = os.path.realpath(file)
        if not real.startswith(prefixes) and not real.startswith(own):
            _announce(f"running {path} also imported {file} (not covered by a pin)")


def _announce(message: str) -> None:
    """Say on standard error which code is about to run (the CLI shows it; the API logs it)."""
    import logging

    logging.getLogger("scorebench.models").info(message)
    if _ANNOUNCE_TO_STDERR:
        print(f"note: {message}", file=sys.stderr, flush=True)


#: Set by :func:`announce_to_stderr` (the CLI) so that every model it runs is named on standard error first.
_ANNOUNCE_TO_STDERR = False


def announce_to_stderr(on: bool = True) -> None:
    """Name every model file or callable on standard error before it runs (the CLI turns this on).

    Examples
    --------
    >>> announce_to_stderr(False)
    """
    global _ANNOUNCE_TO_STDERR
    _ANNOUNCE_TO_STDERR = bool(on)


def _load_torchscript(path: Path, label: str, expected_sha256: str | None, trust: bool) -> tuple[Any, str]:
    """The TorchScript module in ``path`` (named ``label`` in errors; pinned or trusted, see
    :func:`load_extractor`) and the SHA-256 of the bytes it was loaded from."""
    import torch

    data = _read_program(path)
    source = _pinned(path, data, expected_sha256, trust)
    _announce(f"loading and running TorchScript model {path}, sha256 {source}")
    try:  # load the very bytes that were hashed (the file may change meanwhile)
        module = torch.jit.load(io.BytesIO(data), map_location="cpu")
    except (RuntimeError, ValueError) as exc:
        raise InputError(f"model file {label!r} is not a TorchScript archive ({str(exc).splitlines()[0]}); "
                         "save it with torch.jit.script(model).save(path), or pass module:callable") from None
    return module, source


def load_extractor(spec: Any, *, preprocess: Preprocess | None = None,
                   expected_sha256: str | None = None, trust: bool = False) -> Extractor:
    """Load an extractor from a module, a TorchScript file or ``module:callable``.

    A model is code: loading a TorchScript file or importing ``module:callable`` runs it
    with your permissions (see the module docstring). Files run only when pinned with
    ``expected_sha256`` or explicitly trusted with ``trust=True``.

    Parameters
    ----------
    spec : nn.Module, path or str
    preprocess : Preprocess, optional
        Defaults to the module's ``scorebench_preprocess`` attribute (a :class:`Preprocess`
        or a dict of its fields) when it has one, else no preprocessing.
    expected_sha256 : str, optional
        For a TorchScript file or ``file.py:callable``: refuse the file unless its SHA-256
        matches (e.g. the standard FID Inception weights); for ``module:callable``: the
        SHA-256 of the module's source file.
    trust : bool
        Run a file (or an importable module outside scorebench) without a SHA-256 pin.

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
    source = None
    if isinstance(spec, torch.nn.Module):
        module, name = spec, type(spec).__name__
    elif isinstance(spec, (str, Path)):
        text = str(spec)
        path = Path(text)
        if path.is_file():
            module, source = _load_torchscript(path, text, expected_sha256, trust)
            name = path.name
        elif ":" in text and not text.startswith(("http:", "https:")):
            obj, source = _load_callable(text, trust=trust, expected_sha256=expected_sha256)
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
    fingerprint = (_program_fingerprint(source, module, preprocess) if source is not None
                   else weights_fingerprint(module, preprocess))
    return Extractor(module, name, preprocess, fingerprint)
