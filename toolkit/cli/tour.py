"""``privtool tour``: a guided first run, as a list of steps.

Each :class:`Step` says what it shows, then runs one real ``privtool`` command
(printed first, so the user can run it again by hand) through the same entry
point as the console script. A step that fails stops the tour with its error.
Later work adds steps (anonymize, verify, attack, audit) by appending to
:data:`STEPS`.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import click

from ..errors import UserError
from .common import app, stdout_console


@dataclass(frozen=True)
class TourSettings:
    """What every step may use: the working folder, record count and seed."""

    directory: Path
    records: int
    seed: int

    def path(self, name: str) -> Path:
        return self.directory / name


@dataclass(frozen=True)
class Step:
    """One step of the tour: a title, one sentence of explanation, and the
    ``privtool`` arguments it runs."""

    title: str
    explanation: str
    arguments: Callable[[TourSettings], list[str]]


STEPS: list[Step] = [
    Step(
        "Make some data",
        "privtool synth writes synthetic shopping baskets (IBM-Quest style, with popular items and itemsets that go together).",
        lambda s: ["synth", "--records", str(s.records), "--items", "500", "--avg-size", "6", "--max-size", "40",
                   "--size-distribution", "lognormal", "--seed", str(s.seed), "--quiet", "-o", str(s.path("baskets.dat"))],
    ),
    Step(
        "Look at it",
        "privtool stats counts records and items, shows how many items records hold and which items are most common.",
        lambda s: ["stats", str(s.path("baskets.dat")), "--top", "5"],
    ),
]


class TourStepFailed(UserError):
    """A step's command exited with an error (its message is already printed)."""


@click.command("tour")
@click.option("--dir", "directory", default=None, type=click.Path(file_okay=False), help="Where to write the tour's files (default: a new temporary folder, kept).")
@click.option("--records", type=click.IntRange(min=10), default=5000, show_default=True, help="Size of the synthetic dataset.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the synthetic data.")
@click.pass_context
def command(ctx: click.Context, directory: str | None, records: int, seed: int) -> int:
    """A guided first run: make a small dataset and look at it (more steps follow as privtool grows)."""
    from . import main  # the CLI entry point; imported here as it imports this module

    folder = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="privtool-tour-"))
    folder.mkdir(parents=True, exist_ok=True)
    settings = TourSettings(folder, records, seed)
    plugin_flags = [word for name in app(ctx).blocked for word in ("-p", f"no:{name}")]
    console = stdout_console()
    for number, step in enumerate(STEPS, start=1):
        arguments = step.arguments(settings)
        console.rule(f"[bold]Step {number} of {len(STEPS)}: {step.title}")
        console.print(step.explanation)
        console.print(f"[bold]$ privtool {' '.join(arguments)}", highlight=False, soft_wrap=True)
        code = main([*plugin_flags, *arguments])
        if code != 0:
            raise TourStepFailed(f"tour step {number} ({step.title}) failed with exit code {code}; see the error above.")
    console.rule("[bold]Done")
    console.print(f"The tour's files are in {folder}:", highlight=False, soft_wrap=True)
    for path in sorted(folder.iterdir()):
        console.print(f"  {path}  ({path.stat().st_size:,} bytes)", highlight=False, soft_wrap=True)
    return 0
