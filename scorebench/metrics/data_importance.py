"""Data-importance scores for pruning studies: EL2N and GraNd (Paul et al. 2021).

Both rank training examples by how much they matter early in training: EL2N is the L2
norm of the error vector of the softmax output, GraNd the norm of the per-example loss
gradient. Both are averaged over several independent initialisations (or early
checkpoints). EL2N is numpy; GraNd needs torch, which is imported only when
:func:`grand_scores` is called (``import scorebench`` never loads torch).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import numpy as np

from scorebench.core.docstrings import fill_doc
from scorebench.core.errors import InputError
from scorebench.core.validation import as_class_index, as_float_array, check_finite, check_positive_int, check_simplex

__all__ = ["el2n_scores", "grand_scores"]

#: The reference both scores share (see :func:`scorebench.core.docstrings.fill_doc`).
_DOC_SECTIONS = {"paul2021": """
Paul, M., Ganguli, S. & Dziugaite, G. K. (2021). Deep learning on a data diet:
finding important examples early in training. NeurIPS.
"""}


def el2n_scores(probs: Any, labels: Any, /) -> np.ndarray:
    r"""EL2N: the L2 norm of the softmax error, averaged over initialisations.

    .. math:: \mathrm{EL2N}(x, y) = \mathbb E_{\theta}\,
              \big\lVert p(x; \theta) - e_y \big\rVert_2

    Parameters
    ----------
    probs : (R, n, K) or (n, K) array
        Predicted class probabilities of ``R`` independently initialised (and briefly
        trained) models for ``n`` examples; rows must sum to 1.
    labels : (n,) array
        Integer class labels ``0..K-1``.

    Returns
    -------
    (n,) ndarray
        Higher = harder / more important example.

    References
    ----------
    %(paul2021)s

    Examples
    --------
    >>> el2n_scores([[1.0, 0.0], [0.5, 0.5]], [0, 0]).round(4).tolist()
    [0.0, 0.7071]
    """
    p = as_float_array(probs, "probs", ndim=(2, 3))
    if p.ndim == 2:
        p = p[None]
    if p.shape[0] == 0 or p.shape[1] == 0 or p.shape[2] < 2:
        raise InputError(f"probs: expected (R, n, K) with R, n >= 1 and K >= 2, got shape {p.shape}")
    check_finite(p.reshape(-1, p.shape[2]), "probs")
    check_simplex(p.reshape(-1, p.shape[2]), "probs")
    if np.shape(labels) != (p.shape[1],):
        raise InputError(f"labels: expected one label per example ({p.shape[1]}), got shape {np.shape(labels)}")
    y = as_class_index(labels, p.shape[2], "labels", of="probs")
    err = p.copy()
    err[:, np.arange(p.shape[1]), y] -= 1.0
    return np.sqrt((err**2).sum(axis=2)).mean(axis=0)


def grand_scores(model: Any, inputs: Any, labels: Any, /, *, loss_fn: Callable[..., Any] | None = None,
                 n_inits: int = 10, seed: int = 0, batch_size: int = 256, device: str = "cpu") -> np.ndarray:
    r"""GraNd: the per-example loss-gradient norm, averaged over initialisations (torch).

    .. math:: \mathrm{GraNd}(x, y) = \mathbb E_{\theta_0}\,
              \big\lVert \nabla_{\theta}\, \ell\big(f(x; \theta_0), y\big) \big\rVert_2

    The gradient is over every trainable parameter, computed for all examples of a batch
    at once with ``torch.func.vmap(grad(...))`` (the model runs in ``eval()`` mode, so
    batch-norm uses its running statistics). Initialisation ``r`` is drawn under
    ``torch.manual_seed`` of a seed derived from ``(seed, r)`` inside a forked RNG, so the
    caller's global RNG state is untouched and results are reproducible.

    Parameters
    ----------
    model : torch.nn.Module or callable
        Either a module (copied and re-initialised with each submodule's
        ``reset_parameters()``; parameters of modules without one keep their values), or
        a zero-argument factory returning a freshly initialised module.
    inputs : array or tensor
        Examples, batch along axis 0 (cast to the model's floating dtype).
    labels : array or tensor
        Targets for ``loss_fn`` (integer labels become ``long``).
    loss_fn : callable, optional
        ``loss_fn(outputs, targets) -> scalar`` for a batch of one; default cross-entropy.
    n_inits : int
        Number of initialisations averaged (the paper uses 10).
    seed : int
        Seed of the initialisations.
    batch_size : int
        Examples per vectorised gradient computation.
    device : str
        ``"cpu"``, ``"cuda"`` or ``"auto"`` (CUDA when available).

    Returns
    -------
    (n,) ndarray of float64

    References
    ----------
    %(paul2021)s

    Examples
    --------
    >>> import torch
    >>> x = np.array([[1.0, 2.0], [0.0, 0.0]])
    >>> scores = grand_scores(lambda: torch.nn.Linear(2, 3), x, [0, 1], n_inits=2)
    >>> scores.shape, bool((scores > 0).all())
    ((2,), True)
    """
    import torch

    n_inits = check_positive_int(n_inits, "n_inits")
    batch_size = check_positive_int(batch_size, "batch_size")
    seed = check_positive_int(seed, "seed", minimum=0)
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    dev = torch.device(device)
    if not isinstance(model, torch.nn.Module) and not callable(model):
        raise InputError(f"model: expected a torch.nn.Module or a factory returning one, got {type(model).__name__}")
    loss = loss_fn if loss_fn is not None else torch.nn.functional.cross_entropy

    x_all, y_all = _examples(inputs, labels)
    n = x_all.shape[0]
    totals = torch.zeros(n, dtype=torch.float64)
    for r in range(n_inits):
        init_seed = int(np.random.SeedSequence([int(seed), r]).generate_state(1)[0])
        net = _initialised(model, init_seed).to(dev).eval()
        totals += _gradient_norms(net, loss, x_all, y_all, batch_size, dev)
    return (totals / n_inits).numpy()


def _examples(inputs: Any, labels: Any) -> tuple[Any, Any]:
    """Inputs and labels as tensors with the same (>= 1) number of examples along axis 0."""
    import torch

    x_all = torch.as_tensor(np.asarray(inputs) if not torch.is_tensor(inputs) else inputs)
    y_all = torch.as_tensor(np.asarray(labels) if not torch.is_tensor(labels) else labels)
    n = x_all.shape[0] if x_all.ndim else 0
    if n == 0 or y_all.shape[:1] != (n,):
        raise InputError(f"inputs and labels: expected the same number (>= 1) of examples along axis 0, "
                         f"got {tuple(x_all.shape)} and {tuple(y_all.shape)}")
    return x_all, y_all


def _initialised(model: Any, init_seed: int) -> Any:
    """A freshly initialised network: the module copied and reset, or the factory called,
    under ``torch.manual_seed(init_seed)`` in a forked RNG (the caller's state is untouched)."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(init_seed)
        if isinstance(model, torch.nn.Module):
            net = copy.deepcopy(model)
            for sub in net.modules():
                if hasattr(sub, "reset_parameters"):
                    sub.reset_parameters()
            return net
        net = model()
    if not isinstance(net, torch.nn.Module):
        raise InputError(f"model factory returned {type(net).__name__}; expected a torch.nn.Module")
    return net


def _gradient_norms(net: Any, loss: Callable[..., Any], x_all: Any, y_all: Any, batch_size: int, dev: Any) -> Any:
    """Per-example L2 norm of the loss gradient over every trainable parameter (float64 tensor)."""
    import torch
    from torch.func import functional_call, grad, vmap

    params = {k: v.detach() for k, v in net.named_parameters() if v.requires_grad}
    if not params:
        raise InputError("model: has no trainable parameters, so gradient norms are undefined")
    buffers = {k: v.detach() for k, v in net.named_buffers()}
    dtype = next(iter(params.values())).dtype

    def one(p: dict, x: Any, y: Any) -> Any:
        out = functional_call(net, (p, buffers), (x.unsqueeze(0),))
        return loss(out, y.unsqueeze(0))

    per_example = vmap(grad(one), in_dims=(None, 0, 0))
    norms = torch.zeros(x_all.shape[0], dtype=torch.float64)
    for start in range(0, x_all.shape[0], batch_size):
        xb = x_all[start:start + batch_size]
        xb = xb.to(dev, dtype=dtype) if xb.is_floating_point() else xb.to(dev)
        yb = y_all[start:start + batch_size]
        yb = yb.to(dev, dtype=torch.long) if not yb.is_floating_point() else yb.to(dev, dtype=dtype)
        grads = per_example(params, xb, yb)
        sq = sum(g.reshape(g.shape[0], -1).double().pow(2).sum(dim=1) for g in grads.values())
        norms[start:start + batch_size] = sq.sqrt().cpu()
    return norms


fill_doc(el2n_scores, grand_scores, **_DOC_SECTIONS)
