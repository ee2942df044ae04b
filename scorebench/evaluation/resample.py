"""The bootstrap rounds of one group's units: one :class:`Resampler` for every scheme.

Every random draw comes from :mod:`scorebench.core.stats` (the cluster bootstrap's counts
through :func:`scorebench.analysis.stats_tests.cluster_bootstrap_means`, which
:func:`scorebench.compare` shares); this module only chooses the scheme the plan asks for and
hands the reduce step what it needs:

* **multinomial** (``bootstrap="auto"``): each round draws ``n`` of the ``n`` units with
  replacement, from the (metric, group) stream :func:`scorebench.core.stats.rng_for`; means
  of per-row contributions by :func:`~scorebench.core.stats.bootstrap_means` (exact, or
  stratified for very large groups), weight blocks of draw counts for sufficient statistics;
* **Poisson-hash** (``bootstrap="poisson"``, the Dask engine's): Poisson(1) weights from
  each unit's content hash and the seed (:class:`~scorebench.core.stats.PoissonRounds`), the
  same however the table is partitioned;
* **cluster** (``cluster=``): whole clusters drawn with replacement;
* **half-sample** (the ``half_sampling`` interval rules): ``n // 2`` units without
  replacement, or Bernoulli(1/2) memberships from the hashes under the Poisson scheme.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np

from scorebench.analysis.stats_tests import cluster_bootstrap_means
from scorebench.core.stats import (
    PoissonRounds,
    bootstrap_means,
    half_sample,
    half_sample_masks,
    multinomial_blocks,
    resampled_rows,
    two_level_draws,
)

__all__ = ["Resampler"]


@dataclass(frozen=True)
class Resampler:
    """The ``n_boot`` bootstrap rounds of one (metric, group)'s units.

    Attributes
    ----------
    n_boot : int
        Rounds.
    rng : numpy.random.Generator
        The (metric, group) stream (:func:`scorebench.core.stats.rng_for`): multinomial,
        cluster and half-sample draws.
    seed : int
        The seed of the Poisson-hash scheme.
    hashes : (n,) uint64 array or None
        The units' content hashes: the Poisson-hash scheme (partition-independent).
    clusters : (n,) array or None
        The units' clusters: the cluster bootstrap.

    Examples
    --------
    >>> r = Resampler(3, np.random.default_rng(0))
    >>> r.scheme, [block.shape for _, block in r.weight_blocks(4)]
    ('multinomial', [(3, 4)])
    """

    n_boot: int
    rng: np.random.Generator
    seed: int = 0
    hashes: np.ndarray | None = None
    clusters: np.ndarray | None = None

    @property
    def scheme(self) -> str:
        """``cluster``, ``poisson`` (hash-based) or ``multinomial``."""
        if self.clusters is not None:
            return "cluster"
        return "multinomial" if self.hashes is None else "poisson"

    def subset(self, keep: np.ndarray) -> Resampler:
        """The resampler of the units ``keep`` selects (e.g. those left after omitting NaNs)."""
        return replace(self, hashes=None if self.hashes is None else self.hashes[keep],
                       clusters=None if self.clusters is None else self.clusters[keep])

    def poisson(self) -> PoissonRounds:
        """The Poisson weights of the units, a block of rounds at a time (hash-based scheme only)."""
        if self.hashes is None:
            raise ValueError("the Poisson weights need the units' hashes (bootstrap='poisson')")
        return PoissonRounds(self.hashes, self.seed, self.n_boot)

    def means(self, values: np.ndarray) -> tuple[np.ndarray, str]:
        """Replicate means of per-unit ``values`` drawn in memory, and how they were drawn
        (multinomial, stratified or cluster; the Poisson scheme reduces by sums instead)."""
        if self.clusters is not None:
            means = cluster_bootstrap_means(values, self.clusters, self.n_boot, self.rng)
            return means, f"cluster bootstrap ({len(set(self.clusters.tolist()))} clusters)"
        boot = bootstrap_means(values, self.n_boot, self.rng)
        return boot.means, boot.method

    def weighted_sums(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per Poisson round, the weighted sum of ``values`` and the total weight."""
        return self.poisson().weighted_sums(values)

    def weight_blocks(self, n: int) -> Iterator[tuple[int, np.ndarray]]:
        """``(first_round, weights)`` blocks, ``weights`` of shape ``(rounds, n)``: how often each
        unit is drawn (multinomial) or its Poisson weight (hash-based)."""
        return multinomial_blocks(n, self.n_boot, self.rng) if self.hashes is None else self.poisson().blocks()

    def resamples(self, idx: np.ndarray) -> Iterator[np.ndarray]:
        """The rows of each round: ``idx`` drawn with replacement, or repeated by their Poisson weight."""
        if self.hashes is None:
            yield from resampled_rows(idx, self.n_boot, self.rng)
            return
        for _, block in self.poisson().blocks():
            for w in block:
                yield np.repeat(idx, w.astype(np.int64))

    def half_samples(self, idx: np.ndarray) -> Iterator[np.ndarray]:
        """The rows of each half-sample of ``idx``: drawn without replacement, or (hash-based)
        the units whose Bernoulli(1/2) membership of the round is set."""
        if self.hashes is not None:
            for mask in half_sample_masks(self.hashes, self.seed, self.n_boot):
                yield idx[mask]
            return
        for _ in range(self.n_boot):
            yield idx[half_sample(idx.size, self.rng)]

    def half(self, n: int) -> np.ndarray:
        """Positions of a half-sample of ``n`` (side data such as reference samples)."""
        return half_sample(n, self.rng)

    def two_level(self, sizes: np.ndarray, width: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """Rounds of the two-level bootstrap (units, then attempts within units), in blocks."""
        return two_level_draws(sizes, self.n_boot, self.rng, width)
