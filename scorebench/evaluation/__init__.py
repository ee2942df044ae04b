"""The evaluation wing: one pipeline from a result table to scores and paired comparisons.

:mod:`.evaluate` is the public ``evaluate()`` (pandas engine), :mod:`.pipeline` the steps every
engine runs, :mod:`.partial` the mergeable partial results, :mod:`.engines` the registry of
engines for other table types (Dask: :mod:`.dask_engine`), :mod:`.comparison` /
:mod:`.pairwise` / :mod:`.dask_compare` the paired comparisons, :mod:`.paired_units` the
units x systems matrices behind gates and reports. See ``docs/architecture.md``.
"""
