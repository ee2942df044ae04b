"""Statistics over scored results: paired tests, power and planning, decision gates,
anytime-valid confidence sequences, generalisability theory and small-sample posteriors.

These modules take scores (or per-unit matrices from :mod:`scorebench.evaluation`) and never
read files or draw boards. See ``docs/architecture.md``.
"""
