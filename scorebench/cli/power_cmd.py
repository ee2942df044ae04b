"""``scorebench power``: simulated power of scoring rules against a misspecified forecast."""

from __future__ import annotations

import click

from scorebench.core.errors import InputError
from scorebench.analysis.power import MISSPECIFICATIONS, MultivariateNormal, misspecify, power
from scorebench.cli._output import FORMAT_OPTION, OUTPUT_OPTION, emit


def _sizes(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError(f"--n: expected comma-separated integers such as 10,30,100, got {text!r}") from None


@click.command("power")
@click.option("--rule", "-r", "rules", multiple=True, required=True,
              help="Scoring rule (repeatable), e.g. energy_score, variogram_score, crps_ensemble.")
@click.option("--misspecification", "kind", type=click.Choice(sorted(MISSPECIFICATIONS)), default="mean",
              show_default=True, help="; ".join(f"{k}: {v[1]}" for k, v in MISSPECIFICATIONS.items()) + ".")
@click.option("--size", type=float, default=0.25, show_default=True, help="Size of the misspecification.")
@click.option("--dims", type=int, default=5, show_default=True, help="Dimensions of the forecast vector.")
@click.option("--rho", type=float, default=0.5, show_default=True,
              help="Correlation between every pair of dimensions in the true distribution.")
@click.option("--ensemble-size", "-m", type=int, default=50, show_default=True, help="Members per ensemble.")
@click.option("--n", "n_values", default="10,30,100,300", show_default=True,
              help="Comma-separated test-set sizes N.")
@click.option("--replications", "-R", type=int, default=200, show_default=True, help="Monte Carlo replications.")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Level of the one-sided paired test.")
@click.option("--seed", type=int, default=0, show_default=True)
@OUTPUT_OPTION
@FORMAT_OPTION
def command(rules, kind, size, dims, rho, ensemble_size, n_values, replications, alpha, seed, output, fmt) -> None:
    """How often each scoring rule ranks the true forecast above a misspecified one.

    The truth is a DIMS-dimensional standard normal with correlation RHO between all
    dimensions; the forecast is the truth with one misspecification of SIZE. Power is the
    fraction of replications in which the true forecast has the better mean score on N
    observations (Marcotte et al. 2023, regions of reliability).
    """
    truth = MultivariateNormal.equicorrelated(dims, rho=rho)
    result = power(list(rules), truth, misspecify(truth, kind, size), n=_sizes(n_values),
                   ensemble_size=ensemble_size, replications=replications, alpha=alpha, seed=seed)
    table = result.table
    table.attrs["misspecification"] = f"{kind} (size {size:g})"
    emit(table, output, fmt)
