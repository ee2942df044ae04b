"""Cold start (issue 18): importing scorebench and running the CLI's help and a small
``evaluate`` must not load heavy dependencies that only some metrics need. Checks which
modules are loaded (``sys.modules`` in a fresh interpreter), never a time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("scipy.optimize", "scipy.sparse", "scipy.stats", "scipy.linalg", "scipy.special", "scipy.spatial",
         "sklearn", "statsmodels", "torch", "matplotlib", "dask", "distributed", "numba")

_PROBE = """
import json, sys
{body}
heavy = {heavy!r}
print(json.dumps(sorted(m for m in sys.modules if m in heavy)))
"""


def _loaded(body: str) -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = _PROBE.format(body=body, heavy=HEAVY)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_scorebench_loads_no_heavy_dependency():
    assert _loaded("import scorebench") == []


def test_cli_help_loads_no_heavy_dependency():
    body = ("from click.testing import CliRunner\nfrom scorebench.cli import cli as main\n"
            "res = CliRunner().invoke(main, ['--help'])\nassert res.exit_code == 0, res.output")
    assert _loaded(body) == []


@pytest.mark.parametrize("metric", ["brier_score", "log_score"])
def test_small_evaluate_from_cli_loads_no_heavy_dependency(tmp_path, metric):
    table = tmp_path / "ten.csv"
    table.write_text("system,task,item,p,y\n" + "".join(f"s{i % 2},t,{i},{0.1 + 0.08 * i:.2f},{i % 3 == 0:d}\n"
                                                       for i in range(10)))
    body = ("from click.testing import CliRunner\nfrom scorebench.cli import cli as main\n"
            f"res = CliRunner().invoke(main, ['evaluate', {str(table)!r}, '-m', {metric!r}, '--bootstrap', '50'])\n"
            "assert res.exit_code == 0, res.output\nassert 's1' in res.output")
    assert _loaded(body) == []


def test_lazy_names_still_work_after_import():
    # the deferred SciPy names resolve on first use, in the same process
    body = ("import numpy as np, pandas as pd\n"
            "from scorebench.aggregate.input import as_matrix\nfrom scorebench.aggregate.kemeny import kemeny\n"
            "from scorebench.metrics.generative import fid\n"
            "x = np.random.default_rng(0).normal(size=(50, 3))\n"
            "assert abs(fid(x, x + 1.0) - 3.0) < 1e-9\n"
            "m = as_matrix(pd.DataFrame({'t1': [3, 2, 1], 't2': [1, 3, 2], 't3': [3, 1, 2]}, index=list('abc')))\n"
            "r = kemeny(m, solver='milp')\n"
            "assert r.details['rankings'] == [('a', 'b', 'c')], r.details")
    loaded = _loaded(body)
    assert {"scipy.linalg", "scipy.optimize", "scipy.sparse"} <= set(loaded)
