"""Model inputs from local files: ``.npy``, ``.npz``, tables of numeric columns, image folders."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scorebench.core.errors import InputError
from scorebench.core.validation import describe_rows

__all__ = ["ModelInputs", "load_inputs", "IMAGE_SUFFIXES"]

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".tif", ".tiff", ".webp")
_LABELS = ("id", "system", "task")


@dataclass(frozen=True)
class ModelInputs:
    """Samples to run a model on (axis 0 = sample) and one id per sample."""

    values: np.ndarray
    ids: np.ndarray
    source: str


def load_inputs(path: str | Path) -> ModelInputs:
    """Read model inputs from ``path``.

    * ``.npy``: the array (axis 0 = samples);
    * ``.npz``: its only array, or the one named ``x``;
    * a directory: every image file in it, sorted by name, as float (N, C, H, W) in
      0..255 (needs Pillow; all images must share one size — resize in the extractor's
      preprocessing instead); ids are the file names;
    * any table scorebench reads (CSV, Parquet, JSON Lines): its numeric columns, with
      ``id`` (if present) as the ids; ``system``/``task`` columns are ignored.
    """
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(2, "No such file or directory", str(p))
    if p.is_dir():
        return _images(p)
    suffix = p.suffix.lower()
    if suffix in (".npy", ".npz"):
        values = _load_array(p)
        return ModelInputs(_check(values, p), _range_ids(values), str(p))
    from scorebench.io.tables import read_table

    table = read_table(p)
    numeric = [c for c in table.columns if c not in _LABELS and table[c].dtype.kind in "biuf"]
    other = [c for c in table.columns if c not in _LABELS and c not in numeric]
    if other:
        raise InputError(f"{p}: non-numeric column(s) {other[:5]}; expected numeric input columns "
                         "(plus optional id/system/task)")
    if not numeric:
        raise InputError(f"{p}: no numeric columns to use as model inputs")
    values = table[numeric].to_numpy(dtype=np.float64)
    if not np.all(np.isfinite(values)):
        bad = np.flatnonzero(~np.isfinite(values).all(axis=1))
        raise InputError(f"{p}: missing or infinite values in {describe_rows(bad)}; expected numbers")
    ids = table["id"].astype(str).to_numpy() if "id" in table.columns else _range_ids(values)
    return ModelInputs(values, ids, str(p))


def _load_array(p: Path) -> np.ndarray:
    """The array of a ``.npy`` file or an ``.npz`` archive; pickled (object) arrays are refused."""
    try:
        if p.suffix.lower() == ".npy":
            return np.load(p, allow_pickle=False)
        with np.load(p, allow_pickle=False) as archive:
            names = list(archive.files)
            if len(names) != 1 and "x" not in names:
                raise InputError(f"{p}: expected one array or an array named 'x', found {names}")
            return archive["x" if "x" in names else names[0]]
    except ValueError as exc:
        if isinstance(exc, InputError):
            raise
        if "pickle" in str(exc).lower():
            raise InputError(f"{p}: holds an object (pickled) array, which is never loaded (it could run "
                             "code); save a numeric array") from None
        raise InputError(f"{p}: not a valid NumPy file ({' '.join(str(exc).split())[:200]})") from None
    except (OSError, EOFError) as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        raise InputError(f"{p}: not a valid NumPy file ({' '.join(str(exc).split())[:200]})") from None


def _range_ids(values: np.ndarray) -> np.ndarray:
    return np.arange(len(values))


def _check(values: np.ndarray, p: Path) -> np.ndarray:
    if values.dtype.kind not in "biuf" or values.ndim < 1 or values.shape[0] == 0:
        raise InputError(f"{p}: expected a non-empty numeric array, got dtype {values.dtype}, shape {values.shape}")
    if values.dtype.kind == "f" and not np.all(np.isfinite(values)):
        raise InputError(f"{p}: the array holds NaN or infinite values")
    return values


def _images(folder: Path) -> ModelInputs:
    files = sorted(f for f in folder.iterdir() if f.suffix.lower() in IMAGE_SUFFIXES and f.is_file())
    if not files:
        raise InputError(f"{folder}: no image files ({', '.join(IMAGE_SUFFIXES)}) found")
    try:
        from PIL import Image
    except ImportError:
        raise InputError("reading an image folder needs Pillow (pip install pillow)") from None
    arrays = [_image(f, Image) for f in files]
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        raise InputError(f"{folder}: images have different sizes {sorted(shapes)[:3]}; expected one size")
    from scorebench.core.resources import check_allocation

    size = f"{arrays[0].shape[1]}x{arrays[0].shape[0]}"
    check_allocation(sum(a.size for a in arrays), 8, f"{len(arrays)} images of {size}")
    values = np.stack(arrays).transpose(0, 3, 1, 2).astype(np.float32)
    return ModelInputs(values, np.array([f.name for f in files]), str(folder))


def _image(path: Path, Image) -> np.ndarray:
    """One image as (H, W, 3) uint8, decoded under a pixel limit; bad files become one-line errors."""
    import warnings

    from scorebench.core.resources import MAX_IMAGE_PIXELS, check_allocation

    try:
        with warnings.catch_warnings():
            # Pillow only warns between its limit and twice it; any image over the limit is refused.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as img:
                width, height = img.size
                if width * height > MAX_IMAGE_PIXELS:
                    raise InputError(f"{path}: image of {width}x{height} pixels is over the limit of "
                                     f"{MAX_IMAGE_PIXELS} pixels; resize it first")
                check_allocation(width * height, 3 * 5, f"{path}: a {width}x{height} image")
                return np.asarray(img.convert("RGB"), dtype=np.uint8)
    except InputError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise InputError(f"{path}: image is too large to decode safely ({exc})") from None
    except (OSError, ValueError, SyntaxError) as exc:  # UnidentifiedImageError is an OSError
        raise InputError(f"{path}: not a readable image ({' '.join(str(exc).split())[:200]})") from None
