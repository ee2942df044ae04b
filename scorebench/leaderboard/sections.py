"""Board section kinds: a spec table (``[incomplete]``, ``[arena]``, ...) -> its parser and builder.

A section kind is declared once with :func:`register_section`; :func:`scorebench.leaderboard.spec.parse_spec`
reads every declared table through its parser and :func:`scorebench.leaderboard.build.build_board`
lays out every present one through its builder, in declaration order (after the per-task
``[[evaluate]]`` and ``[[compare]]`` sections). Adding a section to the board format is one
declaration plus the :class:`~scorebench.leaderboard.spec.BoardSpec` field that holds its block.

Parsers and builders are named as ``"module:function"`` and imported when first used, so this
registry imports nothing of the board machinery (no import cycle between the builder and the
section modules).

Examples
--------
>>> [k.block for k in section_kinds()]
['aggregate', 'incomplete', 'items', 'compression', 'adaptive', 'irt', 'arena', 'health', 'sampling']
>>> get_section("arena").sources(type("B", (), {"source": "battles"})())
('battles',)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scorebench.core.records import Registry

__all__ = ["SectionKind", "register_section", "section_kinds", "get_section"]


@dataclass(frozen=True)
class SectionKind:
    """One kind of board section.

    ``parse(data, where)`` turns the spec's TOML table into a frozen block (raising
    :class:`~scorebench.core.errors.InputError` naming ``where``); ``build(ctx, block)`` returns the
    board sections; ``sources(block)`` the source names the block reads (checked against the
    spec's ``[[sources]]``); ``standalone``: the block alone is enough to make a board.
    """

    block: str
    parse_path: str
    build_path: str
    sources: Callable[[Any], tuple[str, ...]]
    standalone: bool = True

    def parse(self, data: Any, where: str) -> Any:
        return _resolve(self.parse_path)(data, where)

    def build(self, ctx: Any, block: Any) -> list:
        return list(_resolve(self.build_path)(ctx, block))


_KINDS: Registry[SectionKind] = Registry("board section")


def _resolve(path: str) -> Callable[..., Any]:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def register_section(block: str, *, parse: str, build: str, sources: Callable[[Any], tuple[str, ...]],
                     standalone: bool = True) -> SectionKind:
    """Declare the section kind read from the spec table ``[block]``."""
    return _KINDS.add(block, SectionKind(block, parse, build, sources, standalone))


def section_kinds() -> list[SectionKind]:
    """The declared section kinds, in the order their sections appear on a board."""
    return list(_KINDS.values())


def get_section(block: str) -> SectionKind:
    return _KINDS[block]


def _one(block: Any) -> tuple[str, ...]:
    return (block.source,)


_SPEC = "scorebench.leaderboard.spec"
register_section("aggregate", parse=f"{_SPEC}:_aggregate", build="scorebench.leaderboard.build:aggregate_sections",
                 sources=lambda b: (b.source,) if b.source else ())
register_section("incomplete", parse=f"{_SPEC}:_incomplete",
                 build="scorebench.leaderboard.incomplete:incomplete_sections", sources=_one)
register_section("items", parse=f"{_SPEC}:_items", build="scorebench.leaderboard.items_board:items_sections",
                 sources=_one)
register_section("compression", parse=f"{_SPEC}:_compression",
                 build="scorebench.leaderboard.compression:compression_sections", sources=lambda b: tuple(b.sources))
register_section("adaptive", parse="scorebench.leaderboard.adaptive_board:parse_adaptive",
                 build="scorebench.leaderboard.adaptive_board:adaptive_sections", sources=lambda b: tuple(b.sources))
register_section("irt", parse=f"{_SPEC}:_irt", build="scorebench.leaderboard.irt_board:irt_sections",
                 sources=_one, standalone=False)
register_section("arena", parse="scorebench.leaderboard.arena:parse_arena",
                 build="scorebench.leaderboard.arena:arena_sections", sources=_one)
register_section("health", parse="scorebench.leaderboard.health_board:parse_health",
                 build="scorebench.leaderboard.health_board:health_sections", sources=lambda b: tuple(b.sources))
register_section("sampling", parse="scorebench.leaderboard.sampling_board:parse_sampling",
                 build="scorebench.leaderboard.sampling_board:sampling_sections", sources=_one)
