"""Issue 17: every ranking metric of set_measures, trec_extra and cwl_measures is defined once
(``@measure`` or trec_extra's set-level adapter): the public array function, the registered
table function and the declared parameters all come from one core."""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

import numpy as np
import pytest

import scorebench
from scorebench.core.errors import InputError
from scorebench.metrics.ranking import cwl_measures, extract_ranking, set_measures, trec_extra
from scorebench.metrics.ranking.measures import average_precision, bpref

_spec = importlib.util.spec_from_file_location("_ranking_cases", Path(__file__).with_name("test_ranking_metrics.py"))
_cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cases)

_MODULES = (set_measures, trec_extra, cwl_measures)
_RECORDS = [scorebench.metric(name) for name in scorebench.list_metrics(family="ranking")["name"]
            if scorebench.metric(name).fn.__module__ in {m.__name__ for m in _MODULES}]
#: values for the parameters without a default (the ``@k`` / ``@m`` of the name)
_REQUIRED = {"k": 5, "m": 0.5}


def test_every_public_function_of_the_modules_is_registered():
    public = {getattr(m, name) for m in _MODULES for name in m.__all__ if callable(getattr(m, name))}
    assert public == {r.fn for r in _RECORDS}
    assert len(_RECORDS) == 25


@pytest.mark.parametrize("record", _RECORDS, ids=lambda r: r.name)
def test_public_signature_and_declared_params_come_from_the_core(record):
    fn = record.fn
    core_options = list(inspect.signature(fn.core).parameters)[1:]
    assert list(inspect.signature(fn).parameters) == ["ranked", "judged", *core_options, "relevance_level"]
    assert set(record.params) == set(core_options)
    assert fn.__name__ == fn.core.__name__ and fn.__doc__ == fn.core.__doc__


@pytest.mark.parametrize("record", _RECORDS, ids=lambda r: r.name)
def test_array_function_equals_table_function_per_query(record):
    run, qrels = _cases._random_case(2)
    inputs = extract_ranking(run, qrels=qrels, relevance_level=2)
    params = {p: v for p, v in _REQUIRED.items() if p in record.params}
    at = record.name.split("@")
    metric = scorebench.metric(f"{at[0]}@{params[at[1]]}") if len(at) == 2 else record
    table = metric.compute(inputs.merged())
    arrays = inputs.merged()
    # the same per-query lists through the public array function
    ranked = [arrays["rel"][s:s + n] for s, n in zip(arrays["start"], arrays["n_ret"])]
    judged = [arrays["judged"][s:s + n] for s, n in zip(arrays["judged_start"], arrays["judged_count"])]
    assert len(ranked) == len(inputs.frame) > 20
    np.testing.assert_allclose(record.fn(ranked, judged, relevance_level=2, **params), table, rtol=1e-12, atol=0)


@pytest.mark.parametrize("record", [r for r in _RECORDS if "@" in r.name], ids=lambda r: r.name)
def test_a_missing_required_parameter_is_an_input_error_on_the_array_path(record):
    with pytest.raises(InputError, match=record.name.split("@")[0]):
        record.fn([[1, 0]], [[1]])


def test_geometric_means_stay_set_level_and_equal_their_definition():
    rng = np.random.default_rng(7)
    ranked = [rng.choice([0.0, 1.0, 2.0], size=int(n)) for n in rng.integers(1, 12, 9)]
    judged = [np.array([2.0, 1.0, 1.0, 0.0, 0.0])] * 9
    for fn, base in ((trec_extra.gm_map, average_precision), (trec_extra.gm_bpref, bpref)):
        assert scorebench.metric(fn.__name__).per_row is False
        expected = np.exp(np.mean(np.log(np.maximum(base(ranked, judged), trec_extra.GM_MIN))))
        assert isinstance(fn(ranked, judged), float)
        np.testing.assert_allclose(fn(ranked, judged), expected, rtol=1e-12)
