"""The ground floor: errors, the generic registry of records, the metric registry, table kinds
and their declarations, validation, resampling statistics and resource bounds.

Nothing here imports the wings above it (metrics, evaluation, io, aggregate, leaderboard,
cli); the registries load the built-in registrations by name (:mod:`.builtins`). See
``docs/architecture.md``.
"""
