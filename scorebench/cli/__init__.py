"""The ``scorebench`` command line: one click group, one module per command.

This package is the only place that knows about the terminal. Every error that the user
caused (:class:`~scorebench.core.errors.ScorebenchError`, a missing file) becomes one readable
line on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import sys
import warnings
from importlib import import_module

import click

from scorebench._version import __version__
from scorebench.core.errors import ScorebenchError

# Modules that each define one command (or sub-group) named like the module attribute
# ``command``; add a line to plug a new command in.
_COMMAND_MODULES = (
    "scorebench.cli.metrics_cmd",
    "scorebench.cli.kinds_cmd",
    "scorebench.cli.aggregate_cmd",
    "scorebench.cli.evaluate_cmd",
    "scorebench.cli.compare_cmd",
    "scorebench.cli.run_cmd",
    "scorebench.cli.power_cmd",
    "scorebench.cli.leaderboard_cmd",
    "scorebench.cli.irt_cmd",
    "scorebench.cli.import_cmd",
    "scorebench.cli.reward_cmd",
    "scorebench.cli.rank_similarity_cmd",
    "scorebench.cli.diversity_cmd",
    "scorebench.cli.report_cmd",
    "scorebench.cli.anytime_cmd",
    "scorebench.cli.gstudy_cmd",
    "scorebench.cli.health_cmd",
    "scorebench.cli.signal_cmd",
    "scorebench.cli.bayes_cmd",
    "scorebench.cli.export_cmd",
)


class _Group(click.Group):
    """Turns user errors into one line and a non-zero exit status.

    Any ``OSError`` (a full disk, a read-only file system, a missing folder) is reported with
    its path and reason; warnings are printed as one ``warning:`` line each.
    """

    def invoke(self, ctx: click.Context):
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            try:
                return super().invoke(ctx)
            except (ScorebenchError, OSError, MemoryError, RecursionError) as exc:
                click.echo(f"error: {' '.join(_message(exc).split())}", err=True)
                ctx.exit(2)


def _message(exc: BaseException) -> str:
    if isinstance(exc, OSError) and not isinstance(exc, ScorebenchError):
        reason = exc.strerror or str(exc) or type(exc).__name__
        where = exc.filename if exc.filename is not None else ""
        return f"{reason}: {where}" if where else reason
    if isinstance(exc, MemoryError):
        return f"out of memory ({exc or 'an allocation failed'}); use smaller inputs or parameters"
    if isinstance(exc, RecursionError):
        return "the input is nested too deeply to process"
    return str(exc)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    if issubclass(category, (DeprecationWarning, PendingDeprecationWarning)):
        return  # for developers, not users of the command line
    click.echo(f"warning: {' '.join(str(message).split())}", err=True)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version=__version__, prog_name="scorebench")
def cli() -> None:
    """Evaluate systems that rank and score: metrics with uncertainty, rankings, leaderboards."""


for _module in _COMMAND_MODULES:
    cli.add_command(import_module(_module).command)


def main() -> None:
    """Console entry point."""
    cli(prog_name="scorebench")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
