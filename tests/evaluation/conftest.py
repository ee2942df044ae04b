"""Fixtures shared by the evaluation wing's Dask tests."""

from __future__ import annotations

import pytest


@pytest.fixture(scope="module")
def client():
    """A local cluster like the one the benchmarks use: 2 worker processes of 2 GB, one thread each."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=None, memory_limit="2GB")
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()
