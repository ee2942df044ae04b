"""The evaluation core: one pipeline from a table to scores, for every engine.

See ``docs/architecture.md``. :mod:`.partial` holds the mergeable partial results,
:mod:`.pipeline` the steps every engine runs, :mod:`.engines` the registry of engines for
table types other than pandas (Dask), imported lazily from here only.
"""
