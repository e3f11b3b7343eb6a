"""The ``privtool`` command line.

:func:`main` is the console script. It runs the click group without click's
standalone mode so that every user error, whichever layer raises it, ends the
same way: ``privtool: error: <one sentence>`` on stderr and exit code 2 (a failed
guarantee in ``verify``/``audit`` returns 1). Each command lives in its own
module, listed in :data:`COMMAND_MODULES`.
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback

import click

from .. import __version__
from ..errors import EXIT_INTERNAL, EXIT_USAGE, PluginFault, UserError
from .common import TRACEBACK_ENV, AppState

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
    metavar="[no:]NAME",
    help="Disable the plugin NAME with no:NAME, or load NAME (an entry point or a module) even when "
    "PRIVTOOL_DISABLE_PLUGIN_AUTOLOAD=1 (repeatable), as in pytest.",
)
@click.option(
    "--traceback",
    "show_traceback",
    is_flag=True,
    help=f"Print the traceback of an internal or plugin error (or set {TRACEBACK_ENV}=1).",
)
@click.pass_context
def cli(ctx: click.Context, plugin_flags: tuple[str, ...], show_traceback: bool) -> None:
    """Publish transactional data without letting anyone single out a person, and prove it."""
    blocked: list[str] = []
    load: list[str] = []
    for flag in plugin_flags:
        name = flag[3:] if flag.startswith("no:") else flag
        if not name or name.startswith("no:"):
            raise click.BadParameter(f"expected NAME or no:NAME, got {flag!r}", param_hint="-p")
        (blocked if flag.startswith("no:") else load).append(name)
    ctx.obj = AppState(blocked=tuple(blocked), load=tuple(load), traceback=show_traceback)


for _module in COMMAND_MODULES:
    _command = importlib.import_module(f"{__name__}.{_module}").command
    cli.add_command(_command)


def _one_line(message: str) -> str:
    return " ".join(message.split())


def _wants_traceback(argv: list[str]) -> bool:
    """``--traceback`` among the global options (before the command) or the environment variable."""
    if os.environ.get(TRACEBACK_ENV, "") not in ("", "0"):
        return True
    command = next((i for i, word in enumerate(argv) if word in cli.commands), len(argv))
    return "--traceback" in argv[:command]


def _internal_error(exc: BaseException, argv: list[str]) -> int:
    """Report a plugin fault or an internal error in one sentence (exit 3), with
    the traceback when asked for."""
    if isinstance(exc, PluginFault):
        message, details = exc.message, exc.details
    else:
        text = " ".join(str(exc).split())
        message = f"internal error: {type(exc).__name__}" + (f": {text}" if text else "") + "."
        details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    if _wants_traceback(argv):
        click.echo(
            details or "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)), err=True, nl=False
        )
        hint = ""
    else:
        hint = f" (run with --traceback or {TRACEBACK_ENV}=1 for the traceback)"
    click.echo(f"privtool: error: {_one_line(message)}{hint}", err=True)
    return EXIT_INTERNAL


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit code (0 ok, 1 guarantee failed or assessment
    incomplete, 2 bad input, 3 internal or plugin error)."""
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        result = cli.main(args=args, prog_name="privtool", standalone_mode=False)
    except UserError as exc:
        click.echo(f"privtool: error: {_one_line(exc.message)}", err=True)
        return exc.exit_code
    except PluginFault as exc:
        return _internal_error(exc, args)
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
    except Exception as exc:  # the last line of the error contract: never a bare traceback, never exit 1
        return _internal_error(exc, args)
    return int(result or 0)


def entry_point() -> None:
    sys.exit(main())
