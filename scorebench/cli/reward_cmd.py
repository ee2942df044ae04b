"""``scorebench reward-distance``: STARC, EPIC and DARD distances between reward functions of an MDP."""

from __future__ import annotations

from pathlib import Path

import click

from scorebench.cli._output import FORMAT_OPTION, OUTPUT_OPTION, emit


@click.command("reward-distance")
@click.argument("mdp", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@OUTPUT_OPTION
@FORMAT_OPTION
def command(mdp, output, fmt) -> None:
    """Pairwise distances between the reward functions stored in MDP (an .npz file).

    The file holds ``rewards`` (K, S, A, S), ``gamma``, and optionally ``transition``
    (S, A, S), ``names`` (K,) and ``policy`` (S, A). Output: one row per pair and distance
    (``starc_value``, ``starc_epic``, ``epic``, ``dard``); see
    :mod:`scorebench.metrics.reward.starc`.

    To score reward functions against a reference reward from a long table (one row per
    system, s, a, s_next), use ``scorebench evaluate TABLE --kind mdp -m reward_starc -O gamma=0.9``
    (metrics ``reward_starc``, ``reward_starc_epic``, ``reward_epic``, ``reward_dard``; no
    intervals: see :mod:`scorebench.metrics.reward.mdp_kind`).
    """
    from scorebench.metrics.reward.starc import reward_distances

    emit(reward_distances(mdp), output, fmt)
