"""The ``privtool`` command line.

:func:`main` is the console script. It runs the click group without click's
standalone mode so that every user error, whichever layer raises it, ends the
same way: ``privtool: error: <one sentence>`` on stderr and exit code 2 (a failed
guarantee in ``verify``/``audit`` returns 1). Each command lives in its own
module, listed in :data:`COMMAND_MODULES`.
"""

from __future__ import annotations

import importlib
import sys

import click

from .. import __version__
from ..errors import EXIT_USAGE, UserError
from .common import AppState

COMMAND_MODULES = (
    "plugins",
    "stats",
    "convert",
    "synth",
    "anonymize",
    "hierarchy",
    "sanitize",
    "rules",
    "hide",
    "metrics",
    "verify",
    "attack",
    "audit",
    "compare",
    "tour",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="privtool")
@click.option(
    "-p",
    "plugin_flags",
    multiple=True,
    metavar="no:NAME",
    help="Disable the plugin NAME (repeatable), as in pytest.",
)
@click.pass_context
def cli(ctx: click.Context, plugin_flags: tuple[str, ...]) -> None:
    """Publish transactional data without letting anyone single out a person, and prove it."""
    blocked = []
    for flag in plugin_flags:
        if not flag.startswith("no:") or len(flag) == 3:
            raise click.BadParameter(f"expected no:NAME, got {flag!r}", param_hint="-p")
        blocked.append(flag[3:])
    ctx.obj = AppState(blocked=tuple(blocked))


for _module in COMMAND_MODULES:
    _command = importlib.import_module(f"{__name__}.{_module}").command
    cli.add_command(_command)


def _one_line(message: str) -> str:
    return " ".join(message.split())


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code (0 ok, 1 guarantee failed, 2 bad input)."""
    try:
        result = cli.main(args=argv, prog_name="privtool", standalone_mode=False)
    except UserError as exc:
        click.echo(f"privtool: error: {_one_line(exc.message)}", err=True)
        return exc.exit_code
    except click.exceptions.NoArgsIsHelpError as exc:
        click.echo(exc.ctx.get_help() if exc.ctx else str(exc), err=True)
        return EXIT_USAGE
    except click.UsageError as exc:
        click.echo(f"privtool: error: {_one_line(exc.format_message())}", err=True)
        return EXIT_USAGE
    except click.ClickException as exc:
        click.echo(f"privtool: error: {_one_line(exc.format_message())}", err=True)
        return EXIT_USAGE
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except (click.Abort, KeyboardInterrupt):
        click.echo("privtool: interrupted.", err=True)
        return 130
    except MemoryError:
        click.echo(
            "privtool: error: out of memory: the input is larger than this machine can process "
            "(a dataset, or a release whose clusters claim that many records).",
            err=True,
        )
        return EXIT_USAGE
    return int(result or 0)


def entry_point() -> None:
    sys.exit(main())
