"""One comparison of two aggregation results, shared by the pandas = Dask contract tests."""

from __future__ import annotations

import numpy as np


def assert_same_ranking(got, want, *, sort: bool = False) -> None:
    """Ranks and rank intervals equal exactly, every other column to 1e-9, same resampling.

    ``sort`` orders both tables by system first (for engines that list systems in another order).
    """
    g, w = got.to_frame(), want.to_frame()
    if sort:
        g = g.sort_values("system").reset_index(drop=True)
        w = w.sort_values("system").reset_index(drop=True)
    assert list(g.columns) == list(w.columns)
    assert g["system"].tolist() == w["system"].tolist()
    for col in g.columns:
        if col == "system":
            continue
        if col.startswith("rank"):
            assert g[col].tolist() == w[col].tolist(), col
        else:
            np.testing.assert_allclose(g[col].to_numpy(float), w[col].to_numpy(float), rtol=1e-9, atol=1e-9,
                                       err_msg=col)
    assert got.resample == want.resample and got.n_boot == want.n_boot
