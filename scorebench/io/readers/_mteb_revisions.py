r"""Which revision of a model an MTEB read keeps: the ``revisions=`` policy of the MTEB reader.

The MTEB results repository holds, for many models, several revision folders
(``results/<org>__<model>/<revision>/``): the model run at different commits, with different
``mteb`` versions, plus ``no_revision_available`` / ``external`` for results submitted without
one. A read keeps one result per (model, task) unless asked for every revision.

Policies
--------
``"latest"`` (default)
    mteb's own rule (``BenchmarkResults.join_revisions``, mteb 2.x), applied per (model, task):
    results without scores are dropped; among the rest the result with a parseable
    ``mteb_version`` beats one without, a real revision beats ``no_revision_available`` /
    ``external`` / none, and then the newest ``mteb_version`` (PEP 440 order) wins; a remaining
    tie keeps the first file in path order. mteb ranks one more thing first: the revision its
    own model registry names as the model's main one. That registry is part of the ``mteb``
    package, not of the results folder, so it is not applied here; pin such a model with a
    mapping (below) to get the registry's choice.
``"all"``
    every revision, each its own system ``"<model>@<revision>"`` (the ``revision`` column says
    which), so revisions can be compared.
``{model: revision, ...}`` (CLI: ``model=revision,model=revision``)
    those models at exactly that revision, the others by ``"latest"``.
a revision name
    that revision for every model.

Examples
--------
>>> policy = parse_revisions("org/a=abc123,org/b=no_revision_available")
>>> policy.kind, dict(policy.pinned)
('pinned', {'org/a': 'abc123', 'org/b': 'no_revision_available'})
>>> version_key("1.12.0") > version_key("1.9.3") > version_key("1.9.3.dev0")
True
>>> version_key("2.3.11-2.18.7") is None  # a range is no version (mteb: not PEP 440)
True
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scorebench.core.errors import InputError

__all__ = ["Revisions", "RevisionPolicy", "Candidate", "parse_revisions", "version_key", "choose", "POLICIES"]

#: What ``revisions=`` accepts: a policy name, a revision name or ``{model: revision}``.
Revisions = str | Mapping[str, str]
POLICIES = ("latest", "all")
#: Revisions that name no commit: ranked below real ones (as mteb does).
NO_REVISION = frozenset({"", "external", "no_revision_available"})
_PEP440 = re.compile(r"^v?(\d+(?:\.\d+)*)(?:(a|b|rc)(\d+))?(?:\.post(\d+))?(?:\.dev(\d+))?(?:\+[a-z0-9.]+)?$")
_PRE = {"a": 0, "b": 1, "rc": 2}


@dataclass(frozen=True)
class RevisionPolicy:
    """A parsed ``revisions=`` value: ``kind`` is ``"latest"``, ``"all"``, ``"pinned"`` or ``"every"``."""

    kind: str
    pinned: Mapping[str, str] = field(default_factory=dict)
    every: str | None = None
    text: str = "latest"


@dataclass(frozen=True)
class Candidate:
    """One result file of a (model, task): its revision, mteb version, whether it has scores, and
    what the reader made of it (``payload``); ``order`` is its place in path order."""

    order: int
    file: Path
    revision: str
    version: str | None
    has_scores: bool
    payload: Any = None


def parse_revisions(value: Any) -> RevisionPolicy:
    """The policy named by ``value`` (see the module's text); one-line :class:`InputError` otherwise."""
    if isinstance(value, str):
        text = value.strip()
        if text in POLICIES:
            return RevisionPolicy(kind=text, text=text)
        if "=" in text:
            return _pinned(dict(_pair(part) for part in text.split(",") if part.strip()), text)
        if text:
            return RevisionPolicy(kind="every", every=text, text=text)
    elif isinstance(value, Mapping):
        return _pinned(value, ",".join(f"{k}={v}" for k, v in value.items()))
    raise InputError(f"revisions={value!r}: expected 'latest', 'all', a revision name, or a mapping "
                     "{model: revision} (CLI: model=revision,model=revision)")


def _pair(part: str) -> tuple[str, str]:
    model, _, revision = part.partition("=")
    return model.strip(), revision.strip()


def _pinned(mapping: Mapping[Any, Any], text: str) -> RevisionPolicy:
    bad = [k for k, v in mapping.items() if not (isinstance(k, str) and k and isinstance(v, str) and v)]
    if bad or not mapping:
        raise InputError(f"revisions={text!r}: expected model=revision pairs with non-empty texts"
                         + (f" (not {bad[0]!r})" if bad else ""))
    return RevisionPolicy(kind="pinned", pinned=dict(mapping), text=text)


def version_key(text: str | None) -> tuple | None:
    """A sort key of an mteb version in PEP 440 order (dev < pre-release < release < post), or
    None when ``text`` is not a single version (mteb's own order treats those as unversioned)."""
    match = _PEP440.match(text.strip().lower()) if isinstance(text, str) else None
    if match is None:
        return None
    release, pre, pre_n, post, dev = match.groups()
    parts = [int(p) for p in release.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    if pre is not None:
        pre_key: tuple = (1, _PRE[pre], int(pre_n))
    else:
        pre_key = (0,) if dev is not None and post is None else (2,)
    return tuple(parts), pre_key, int(post) if post is not None else -1, (0, int(dev)) if dev is not None else (1,)


def _latest_key(candidate: Candidate) -> tuple:
    version = version_key(candidate.version)
    return (candidate.has_scores, version is not None, candidate.revision not in NO_REVISION, version or ())


def _latest(found: list[Candidate]) -> Candidate:
    return max(found, key=_latest_key)  # max keeps the first of equal keys: path order breaks ties


def choose(policy: RevisionPolicy, candidates: Mapping[tuple[str, str], list[Candidate]]
           ) -> list[tuple[str, str, Candidate]]:
    """``(system, task, candidate)`` kept under ``policy``, in path order.

    ``candidates`` maps (model, task) to its result files in path order. The system is the
    model, or ``"<model>@<revision>"`` under ``"all"``.
    """
    if policy.kind == "all":
        kept = [(f"{model}@{c.revision}" if c.revision else model, task, c)
                for (model, task), found in candidates.items() for c in found]
    else:
        pins = _pins(policy, candidates)
        kept = []
        for (model, task), found in candidates.items():
            if model in pins:
                found = [c for c in found if c.revision == pins[model]]
            if found:
                kept.append((model, task, _latest(found)))
    return sorted(kept, key=lambda item: item[2].order)


def _pins(policy: RevisionPolicy, candidates: Mapping[tuple[str, str], list[Candidate]]) -> dict[str, str]:
    """Model -> its required revision, each checked against the revisions the folder holds."""
    present: dict[str, set[str]] = {}
    for (model, _), found in candidates.items():
        present.setdefault(model, set()).update(c.revision for c in found)
    if policy.kind == "every":
        every = policy.every or ""
        if not any(every in revs for revs in present.values()):
            seen = sorted({r for revs in present.values() for r in revs})
            raise InputError(f"revisions={every!r}: not 'latest' or 'all', and no model has a revision of that "
                             f"name (revisions present: {_listing(seen)})")
        pins = dict.fromkeys(present, every)
    else:
        pins = dict(policy.pinned)
    for model, revision in pins.items():
        if model not in present:
            raise InputError(f"revisions: model {model!r} has no results of the benchmark's tasks here "
                             f"(models: {_listing(sorted(present))})")
        if revision not in present[model]:
            raise InputError(f"revisions: model {model!r} has no revision {revision!r}; revisions present: "
                             f"{_listing(sorted(present[model]))}")
    return pins


def _listing(names: list[str], most: int = 8) -> str:
    shown = ", ".join(repr(n) for n in names[:most])
    return shown + (f" and {len(names) - most} more" if len(names) > most else "")
