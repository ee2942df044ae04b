r"""Chatbot Arena battles (FastChat ``clean_battle_<date>.json``, ``*.battle.jsonl``) -> a ``battles`` table.

The file is a JSON array of battles (``clean_battle_<date>.json``, as GenAI-Arena publishes
it too) or JSON Lines, one battle a line (FastChat's ``*.battle.jsonl``); gzipped copies
(``.json.gz``, ``.jsonl.gz``) are read as well. A battle has ``question_id``, ``model_a``, ``model_b``, ``winner``
(``model_a``, ``model_b``, ``tie`` or ``tie (bothbad)``), ``judge``, ``turn``, ``anony``,
``language``, ``tstamp``, ``conv_metadata`` (``sum_assistant_a_tokens``,
``sum_assistant_b_tokens``, ``header_count_a``/``_b``, ``list_count_a``/``_b``,
``bold_count_a``/``_b``), ``category_tag`` and ``dedup_tag``.

The table has ``a``, ``b``, ``winner`` in {``a``, ``b``, ``tie``} (what
:func:`scorebench.aggregate` reads for Bradley–Terry / Elo), ``both_bad`` for
``tie (bothbad)``, the labels ``question_id``, ``judge``, ``turn``, ``anony``,
``language``, ``tstamp``, and the style features as numeric covariates, one column per
``conv_metadata`` key (``style_<key>``; Chiang et al.'s style control regresses on their
a-minus-b differences).

A battle of a model against itself (``model_a == model_b``, found in public files) says
nothing about the ranking and would block the fit: such rows are dropped with a warning
naming their count (``self_play="drop"``, default, as FastChat-derived code keeps going),
or refused (``self_play="raise"``).

Filters: ``anony`` (True: anonymous battles only, the leaderboard's default data),
``language`` (one or a list), ``category`` (a dotted path into ``category_tag`` that must be
true, e.g. ``"math_v0.1.math"`` or ``"criteria_v0.1.specificity"``), ``dedup`` (drop battles
whose ``dedup_tag.sampled`` is false: FastChat's down-sampling of over-represented prompts).

FastChat's ``compute_mle_elo`` (and GenAI-Arena's copy of it) fits
``LogisticRegression(fit_intercept=False)`` on win counts doubled (a tie is one win each
way) over every ordered pair of models, i.e. four times the per-battle log-likelihood;
with sklearn's default ``C=1`` ridge :math:`\tfrac12\lVert w\rVert^2` on
:math:`w = \theta/\ln 10`, that is :func:`scorebench.aggregate` ``"bradley_terry"`` with
``prior`` :math:`= 1/(4\ln^2 10) \approx 0.0471` (``penalty=None`` is ``prior=0``); checked
against sklearn to 1e-6 Elo in ``tests/io/test_readers_arena.py``.

Reference: Chiang et al. (2024), Chatbot Arena: An Open Platform for Evaluating LLMs by
Human Preference, ICML.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pandas as pd

from scorebench.core.errors import InputError
from scorebench.io.readers._common import Provenance, field_error, head_bytes, jsonl_records, load_json, plain_name, regular_files, require

__all__ = ["read", "detect"]

_WINNERS = {"model_a": "a", "model_b": "b", "tie": "tie", "tie (bothbad)": "tie"}


_PATTERNS = ("clean_battle*.json", "clean_battle*.json.gz", "*.battle.jsonl", "*.battle.jsonl.gz")


def detect(path: Path) -> bool:
    """True for a JSON array (or JSON Lines) of battles: ``model_a``, ``model_b`` and ``winner`` up front."""
    if path.is_dir():
        files = [f for pattern in _PATTERNS for f in path.glob(pattern)]
        return len(files) == 1 and detect(files[0])
    name = plain_name(path)
    if not path.is_file() or not name.endswith((".json", ".jsonl")):
        return False
    head = head_bytes(path).lstrip()
    return head.startswith((b"[", b"{")) and b'"model_a"' in head and b'"model_b"' in head and b'"winner"' in head


def read(path: Path, *, anony: bool | None = None, language: str | list[str] | None = None,
         category: str | None = None, dedup: bool = False, self_play: str = "drop") -> pd.DataFrame:
    """Read a ``clean_battle`` or ``*.battle.jsonl`` file into a battles table (options in the module docstring)."""
    if self_play not in ("drop", "raise"):
        raise InputError(f"self_play={self_play!r}: expected 'drop' or 'raise'")
    if path.is_dir():
        files = sorted(regular_files(f for pattern in _PATTERNS for f in path.glob(pattern)))
        if len(files) != 1:
            raise InputError(f"{path}: expected one clean_battle*.json or *.battle.jsonl file, found {len(files)}")
        path = files[0]
    prov = Provenance("arena", path.parent)
    data = prov.read(path)
    if plain_name(path).endswith(".jsonl"):
        battles = [value for _, value in jsonl_records(path, data)]
    else:
        battles = load_json(path, data)
    if not isinstance(battles, list):
        raise field_error(path, "(top level)", f"expected a JSON array of battles, got {type(battles).__name__}")
    languages = {language} if isinstance(language, str) else (set(language) if language is not None else None)
    rows, selfplay = [], []
    for i, battle in enumerate(battles):
        row = _row(battle, path, i)
        if row["a"] == row["b"]:
            selfplay.append(i)
            continue
        if anony is not None and row["anony"] != anony or languages is not None and row["language"] not in languages:
            continue
        if category is not None and not _tagged(battle.get("category_tag"), category):
            continue
        if dedup and isinstance(battle.get("dedup_tag"), dict) and battle["dedup_tag"].get("sampled") is False:
            continue
        rows.append(row)
    if selfplay:
        if self_play == "raise":
            raise field_error(path, f"[{selfplay[0]}].model_b", f"{len(selfplay)} battle(s) of a model against itself "
                                                                "(model_a == model_b); pass self_play='drop'")
        warnings.warn(f"arena: dropped {len(selfplay)} battle(s) of a model against itself (model_a == model_b), "
                      f"first at [{selfplay[0]}]", stacklevel=3)
    if not rows:
        raise InputError(f"{path}: no battle left after the filters (anony={anony}, language={language}, "
                         f"category={category}, dedup={dedup})")
    table = pd.DataFrame(rows)
    return prov.stamp(table, [], n_battles=len(table), n_in_file=len(battles), n_self_play_dropped=len(selfplay),
                      filters=f"anony={anony}, language={language}, category={category}, dedup={dedup}")


def _row(battle: Any, path: Path, i: int) -> dict[str, Any]:
    where = f"[{i}]"
    if not isinstance(battle, dict):
        raise field_error(path, where, f"expected a battle object, got {type(battle).__name__}")
    a = require(battle, "model_a", str, path, f"{where}.model_a")
    b = require(battle, "model_b", str, path, f"{where}.model_b")
    winner = require(battle, "winner", str, path, f"{where}.winner")
    if winner not in _WINNERS:
        raise field_error(path, f"{where}.winner", f"{winner!r}; expected one of {sorted(_WINNERS)}")
    row = {"a": a, "b": b, "winner": _WINNERS[winner], "both_bad": winner == "tie (bothbad)",
           "question_id": str(battle.get("question_id", "")), "judge": str(battle.get("judge", "")),
           "turn": battle.get("turn"), "anony": bool(battle.get("anony", False)),
           "language": str(battle.get("language", "")), "tstamp": battle.get("tstamp")}
    meta = battle.get("conv_metadata") or {}
    if not isinstance(meta, dict):
        raise field_error(path, f"{where}.conv_metadata", "expected an object of style features")
    for key, value in meta.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            if isinstance(value, dict):  # newer files nest header/list/bold counts by level
                value = sum(v for v in value.values() if isinstance(v, (int, float)) and not isinstance(v, bool))
            else:
                raise field_error(path, f"{where}.conv_metadata.{key}", f"expected a number, got {value!r}")
        row[f"style_{key}"] = float(value)
    return row


def _tagged(tags: Any, dotted: str) -> bool:
    node = tags
    for part in _split_path(dotted):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return node is True


def _split_path(dotted: str) -> list[str]:
    """``"math_v0.1.math"`` -> ``["math_v0.1", "math"]``: version suffixes keep their dot."""
    parts: list[str] = []
    for piece in dotted.split("."):
        if parts and piece.isdigit() and parts[-1][-1:].isdigit() and "_v" in parts[-1]:
            parts[-1] += "." + piece
        else:
            parts.append(piece)
    return parts
