"""Contract tests over the whole metric registry (scikit-learn's ``test_common`` idea).

Every registered metric gets every check below by registering: there is no list of metric
names to keep up to date. For each metric a small random valid table of its kind comes
from ``tests/_contract_tables.py`` (a new kind needs one generator there; the test
``test_every_kind_has_a_table_generator`` says so), and the checks are:

* bounds: the values lie within the declared ``bounds``;
* direction: a perfect system scores at least as well as a random one (where the kind
  defines a perfect system and the metric has a direction);
* per-row metrics: the table value is the mean of the per-unit values;
* the array function (``Metric.fn`` on the kind's arrays) gives the table value;
* pandas equals Dask (values and Poisson-bootstrap intervals, rtol 1e-9) on a random
  partitioning of shuffled rows;
* the value lies inside its own interval;
* invalid input (a missing column, a NaN, text in a numeric column) raises ``InputError``.

A metric that fails a contract for a known reason is listed in ``XFAIL`` (strict, so the
entry must go when the metric is fixed).
"""

from __future__ import annotations

import functools
import re
import sys
import warnings
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import scorebench
from scorebench.core.errors import InputError
from scorebench.core.registry import (
    NO_EXTERNAL_REFERENCE,
    Metric,
    Positional,
    all_metrics,
    canonical_name_matches,
    metric_aliases,
)
from scorebench.core.stats import MIN_BOOT
from scorebench.core.table_schema import OPTION_TYPES
from scorebench.core.tables import all_kinds, get_kind

sys.path.insert(0, str(Path(__file__).parents[1]))
from _contract_tables import BROKEN, TABLE_OF, make_table  # noqa: E402

RTOL = 1e-9
#: ``@`` values for metrics registered without a default (``ndcg@k`` -> ``ndcg@5``).
AT_VALUES = {"k": 5, "r": 0.5, "m": 1.5, "column": "acc"}
#: Parameters a metric needs that have no default.
REQUIRED_PARAMS = {"threshold_brier_score": {"threshold": 0.5},
                   "kid": {"n_subsets": 10},  # fewer subsets than the default 100: same contract, faster
                   "rewardbench_section": {"section": "chat"}}  # default None = the group's one section

#: (check, metric) -> why the metric is expected to fail that check (found by these tests;
#: the fixes lie outside the contract tests' files).
XFAIL: dict[tuple[str, str], str] = {
}
#: Columns to drop for the missing-column check where the kind's default is optional for the metric.
MISSING = {"inception_score": ("p_a", "p_b"), "vendi_score": ("f0", "f1")}
#: torch metrics compute in float32 over padded batches of a partition's lists: the value
#: moves in the 8th digit with the batch composition.
TORCH_RTOL = 1e-6

#: Metrics without a perfect system on the kind's perfect table, and why.
NO_PERFECT = {
    "crps_quadrature": "one forecast CDF for every row (a callable parameter), so no per-row perfect forecast",
    "inception_score": "reads class probabilities of generated samples only; the real features play no part",
    "vendi_score": "a diversity score of the generated samples alone; copying the reference is not its optimum",
}

RECORDS = [m for m in all_metrics() if m.family not in ("test", "demo")]


def _params(check: str, records=RECORDS):
    out = []
    for record in records:
        reason = XFAIL.get((check, record.name))
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        out.append(pytest.param(record, id=record.name, marks=marks))
    return out


@functools.lru_cache(maxsize=None)
def _quadrature_cdf():
    """One CDF object for every use, so the parameterised metric's name is the same each time."""
    from scipy import stats

    return stats.norm(0.5, 0.3).cdf


def concrete(record: Metric) -> Metric:
    """The record with values for parameters that have no default (``ndcg@k`` -> ``ndcg@5``)."""
    m = record
    if m.at_param is not None and m.params[m.at_param] is None:
        m = scorebench.metric(f"{m.name.split('@')[0]}@{AT_VALUES[m.at_param]}")
    if record.name == "crps_quadrature":
        return m.with_params(cdf=_quadrature_cdf())
    return m.with_params(**REQUIRED_PARAMS.get(record.name, {}))


@functools.lru_cache(maxsize=None)
def _table(name: str, kind: str, quality: str = "random"):
    return make_table(TABLE_OF.get(name, kind), quality)


def table_for(record: Metric, quality: str = "random") -> tuple[pd.DataFrame, dict] | None:
    """The (shared, read-only) contract table of the metric's kind; copies go to tests that spoil it."""
    return _table(record.name, record.kind, quality)


def evaluate(record: Metric, table: pd.DataFrame, options: dict, **kwargs) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # notes such as clipped rows are not contract failures
        return scorebench.evaluate(table, concrete(record), **options, **kwargs)


def test_every_kind_has_a_table_generator():
    kinds = {k.name for k in all_kinds()} | {m.kind for m in RECORDS}
    lacking = sorted(k for k in kinds if k not in BROKEN and any(m.kind == k for m in RECORDS))
    assert not lacking, f"add a table generator to tests/_contract_tables.py for kind(s) {lacking}"


@pytest.mark.parametrize("record", _params("bounds"))
def test_values_lie_within_the_declared_bounds(record):
    low, high = record.bounds
    for quality in ("random", "perfect"):
        made = table_for(record, quality)
        if made is None:
            continue
        values = evaluate(record, *made, n_boot=0)["value"].to_numpy()
        assert not np.isnan(values).any(), f"{record.name}: NaN on a valid {quality} table"
        assert ((values >= low) & (values <= high)).all(), \
            f"{record.name} ({quality} table): {values} outside the declared bounds {record.bounds}"


@pytest.mark.parametrize("record", _params("direction"))
def test_a_perfect_system_scores_at_least_as_well_as_a_random_one(record):
    if record.higher_is_better is None:
        pytest.skip("no direction (higher_is_better=None): the values have no order")
    if record.name in NO_PERFECT:
        pytest.skip(NO_PERFECT[record.name])
    perfect = table_for(record, "perfect")
    if perfect is None:
        pytest.skip(f"kind {record.kind!r} defines no perfect system")
    best = evaluate(record, *perfect, n_boot=0)["value"].to_numpy()
    rand = evaluate(record, *table_for(record), n_boot=0)["value"].to_numpy()
    sign = 1.0 if record.higher_is_better else -1.0
    slack = 1e-9 * max(1.0, float(np.max(np.abs(rand))))
    assert (sign * (best - rand) >= -slack).all(), \
        f"{record.name} (higher_is_better={record.higher_is_better}): perfect {best} vs random {rand}"


@pytest.mark.parametrize("record", _params("per_row_mean"))
def test_per_row_contributions_average_to_the_table_value(record):
    if not record.per_row:
        pytest.skip("set-level metric: one value per group, no per-row contributions")
    table, options = table_for(record)
    totals = evaluate(record, table, options, n_boot=0).set_index("system")
    inputs = get_kind(record.kind).extract(table, nan_policy="raise", **options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        contributions = pd.Series(concrete(record).compute(inputs.merged()), dtype=np.float64)
    systems = inputs.frame["system"].to_numpy()
    means = contributions.groupby(systems).mean()
    np.testing.assert_allclose(means.loc[totals.index].to_numpy(), totals["value"].to_numpy(), rtol=1e-12)
    assert contributions.groupby(systems).size().loc[totals.index].tolist() == totals["n"].tolist()
    if inputs.key is not None:  # the per-unit rows evaluate returns are those contributions
        units = evaluate(record, table, options, n_boot=0, per_unit=True)
        units = units[units[inputs.key] != "all"]
        own = inputs.frame[["system", inputs.key]].astype({inputs.key: str}).assign(own=contributions.to_numpy())
        paired = units.merge(own, on=["system", inputs.key], validate="one_to_one")
        assert len(paired) == len(own)
        np.testing.assert_allclose(paired["value"].to_numpy(), paired["own"].to_numpy(), rtol=1e-12)


@pytest.mark.parametrize("record", _params("array_function"))
def test_the_array_function_gives_the_table_value(record):
    if not isinstance(record.table_fn, Positional):
        pytest.skip("defined on the table (table_fn): its public function takes other arguments")
    table, options = table_for(record)
    one = table[table["system"] == table["system"].iloc[-1]].drop(columns="system").reset_index(drop=True)
    m = concrete(record)
    arrays = get_kind(record.kind).extract(one, nan_policy="raise", **options).merged()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        direct = np.asarray(m(*(arrays[name] for name in m.inputs)), dtype=np.float64)
    expected = float(evaluate(record, one, options, n_boot=0)["value"].item())
    got = float(direct.mean()) if record.per_row else float(direct)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


def random_partitions(dd, table: pd.DataFrame, name: str):
    """The table cut into 2 to 4 partitions at random rows (fixed per metric)."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    cuts = np.sort(rng.choice(np.arange(1, len(table)), int(rng.integers(1, 4)), replace=False))
    pieces = np.split(np.arange(len(table)), cuts)
    return dd.concat([dd.from_pandas(table.iloc[rows], npartitions=1, sort=False) for rows in pieces])


def _variant(record: Metric) -> str:
    return TABLE_OF.get(record.name, record.kind)


def _both_engines(records: list[Metric], table: pd.DataFrame, options: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The pandas engine with the Poisson bootstrap, and the Dask engine on a random partitioning."""
    dd = pytest.importorskip("dask.dataframe")
    import dask

    names = [concrete(r) for r in records]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = scorebench.evaluate(table, names, n_boot=MIN_BOOT, seed=7, bootstrap="poisson", **options)
        with dask.config.set(scheduler="synchronous"):
            got = scorebench.evaluate(random_partitions(dd, table, ",".join(r.name for r in records)), names,
                                      n_boot=MIN_BOOT, seed=7, **options)
    return expected, got


@functools.lru_cache(maxsize=None)
def _engines_by_table(variant: str):
    """Both engines on all metrics of one table at once (fast); None when one of them fails,
    so that each metric is then run on its own and the failure is reported against it."""
    # metrics expected to fail here run alone, so they cannot send their table's others one by one
    records = [r for r in RECORDS if _variant(r) == variant and ("dask", r.name) not in XFAIL]
    if not records:
        return None
    try:
        return _both_engines(records, *table_for(records[0]))
    except Exception:  # noqa: BLE001  (any failure: fall back to one metric at a time)
        return None


@pytest.mark.parametrize("record", _params("dask"))
def test_pandas_and_dask_engines_agree_on_a_random_partitioning(record):
    both = None if ("dask", record.name) in XFAIL else _engines_by_table(_variant(record))
    if both is None:
        both = _both_engines([record], *table_for(record))
    name = concrete(record).name
    expected, got = (frame[frame["metric"] == name] for frame in both)
    assert len(expected) > 0 and len(got) == len(expected)
    key = [c for c in ("system", "task") if c in expected.columns]
    expected = expected.sort_values(key).reset_index(drop=True)
    got = got.sort_values(key).reset_index(drop=True)
    assert got[key].equals(expected[key]) and (got["n"].to_numpy() == expected["n"].to_numpy()).all()
    for column in ("value", "ci_low", "ci_high"):
        np.testing.assert_allclose(got[column], expected[column], rtol=TORCH_RTOL if record.needs_torch else RTOL,
                                   atol=1e-12, err_msg=column)


@pytest.mark.parametrize("record", _params("interval"))
def test_the_value_lies_inside_its_interval(record):
    """Centred rules contain the estimate by construction, percentile intervals of a mean
    do on any but a pathological sample; a Wilson interval always does."""
    table, options = table_for(record)
    if record.interval_method == "none":  # the rows are not a sample (the cells of an MDP): no interval claimed
        scores = evaluate(record, table, options, n_boot=MIN_BOOT, seed=0)
        assert scores["ci_low"].isna().all() and scores["ci_high"].isna().all()
        return
    # centred rules contain the estimate by construction: the fewest rounds suffice
    n_boot = 5 * MIN_BOOT if record.interval_method == "percentile" else MIN_BOOT
    scores = evaluate(record, table, options, n_boot=n_boot, seed=0)
    tol = 1e-12 * np.maximum(1.0, np.abs(scores["value"]))
    assert scores["ci_low"].notna().all(), f"{record.name}: no interval ({scores.attrs.get('interval')})"
    assert ((scores["ci_low"] <= scores["value"] + tol) & (scores["value"] <= scores["ci_high"] + tol)).all(), \
        scores[["system", "value", "ci_low", "ci_high"]].to_string()


def _spoiled(record: Metric, how: str) -> tuple[pd.DataFrame, dict]:
    table, options = table_for(record)
    table = table.copy()
    broken = BROKEN[TABLE_OF.get(record.name, record.kind)]
    if how == "missing column":
        # a parametric rule's own parameter column, else the kind's required column
        column = record.inputs[1] if record.kind == "parametric" and len(record.inputs) > 1 else broken.drop
        return table.drop(columns=list(MISSING.get(record.name, (column,)))), options
    table[broken.numeric] = table[broken.numeric].astype(object)
    table.loc[3, broken.numeric] = np.nan if how == "NaN" else "abc"
    return table, options


def _invalid_cases():
    for record in RECORDS:
        for how in ("missing column", "NaN", "text"):
            reason = XFAIL.get((f"invalid: {how}", record.name))
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            yield pytest.param(record, how, id=f"{record.name}-{how}", marks=marks)


@pytest.mark.parametrize("record, how", list(_invalid_cases()))
def test_invalid_input_raises_an_input_error(record, how):
    table, options = _spoiled(record, how)
    with pytest.raises(InputError):
        evaluate(record, table, options, n_boot=0)


def test_the_exception_lists_name_registered_metrics():
    """A renamed or removed metric must leave the lists above, so none outlives its reason."""
    names = {m.name for m in RECORDS}
    listed = {name for _, name in XFAIL} | set(NO_PERFECT) | set(MISSING) | set(REQUIRED_PARAMS) | set(TABLE_OF)
    assert listed <= names, sorted(listed - names)
    checks = {"bounds", "direction", "per_row_mean", "array_function", "dask", "interval"} | \
        {f"invalid: {how}" for how in ("missing column", "NaN", "text")}
    assert {check for check, _ in XFAIL} <= checks


# --- declared parameters: every metric refuses a bad value with the one template ---------------

_BAD_VALUES = {int: ("not-a-number", 2.5, True), float: ("not-a-number", "1e", True), bool: ("maybe", 2),
               str: (12345,)}


def _invalid_parameters():
    """For every declared parameter of every metric, values its declaration refuses."""
    for record in RECORDS:
        for option in record.options:
            if option.type in ("any", "table"):
                continue  # arrays, mappings or callables: checked by the function itself
            bad = ("__not_a_choice__",) if option.choices else _BAD_VALUES[option.type]
            for value in bad:
                yield pytest.param(record, option, value, id=f"{record.name}-{option.name}-{value!r}")


@pytest.mark.parametrize("record, option, value", list(_invalid_parameters()))
def test_a_bad_parameter_fails_with_one_template(record, option, value):
    base = record.name.split("@", 1)[0]
    expected = OPTION_TYPES[option.type] if not option.choices else "one of"
    pattern = re.escape(f"metric {record.base_name!r}: parameter {option.name!r} expects {expected}")
    with pytest.raises(InputError, match=pattern + r".*got " + re.escape(repr(value))):
        scorebench.metric(base, **{option.name: value})
    if isinstance(value, str):  # the same template from a name on the command line
        with pytest.raises(InputError, match=pattern):
            scorebench.metric(f"{base}({option.name}={value})")


def test_every_declared_parameter_is_accepted_at_its_default():
    for record in RECORDS:
        for option in record.options:
            if option.default is not None:
                assert record.with_params(**{option.name: option.default}).params[option.name] == option.default


def test_an_unknown_parameter_names_the_metric_and_the_accepted_ones():
    for record in RECORDS:
        with pytest.raises(InputError, match=re.escape(f"metric {record.base_name!r}: unknown parameter(s) ['zz']")):
            scorebench.metric(record.name.split("@", 1)[0], zz=1)


def test_every_metric_says_what_it_is_tested_against():
    """Issue 38: the catalogue shows each metric's reference and tolerance; none may lack one."""
    missing = [m.name for m in RECORDS if not m.tested_against]
    assert not missing, missing
    for m in RECORDS:
        for reference, tolerance in m.tested_against:
            assert isinstance(reference, str) and reference.strip()
            if tolerance is None:  # only the explicit "no external reference" entry has no tolerance
                assert (reference, tolerance) == NO_EXTERNAL_REFERENCE, m.name
            else:
                assert 0 <= tolerance < 0.1, (m.name, tolerance)


def test_the_registry_name_is_the_public_function_name():
    """Issue 30: the registry name is the function's name ``X``, or ``X@param`` for a function
    ``X`` (``ndcg@k`` <-> ``ndcg``) or ``X_at_param`` (``pass@k`` <-> ``pass_at_k``). The
    field's short spellings (``p@k``, ``map@k``, ``mrr``) are aliases of the record."""
    def follows(name: str, fn_name: str) -> bool:  # the rule, written out independently of the registry's
        base, _, at = name.partition("@")
        return fn_name in (name, base) or (at != "" and fn_name == f"{base}_at_{at}")

    differ = sorted((m.name, m.fn.__name__) for m in RECORDS if not follows(m.name, m.fn.__name__))
    assert not differ, differ
    assert all(canonical_name_matches(m.name, m.fn.__name__) for m in RECORDS)


def test_every_alias_resolves_to_its_record():
    """An alias is the same metric under another spelling: same function, kind, parameters and
    declarations, and the lookup keeps the alias's spelling."""
    aliases = metric_aliases()
    assert len(aliases) >= 8
    by_name = {m.name: m for m in RECORDS}
    for alias, name in aliases.items():
        record, via_alias = by_name[name], scorebench.metric(alias)
        assert via_alias.name == alias
        assert via_alias.fn is record.fn and via_alias.table_fn is record.table_fn
        assert (via_alias.kind, via_alias.family, via_alias.at_param) == (record.kind, record.family, record.at_param)
        assert dict(via_alias.params) == dict(record.params) and via_alias.options == record.options
        assert via_alias.interval_method == record.interval_method and via_alias.bounds == record.bounds
        assert alias.partition("@")[0] not in {m.name.partition("@")[0] for m in RECORDS}
