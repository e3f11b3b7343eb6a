"""``privtool tour``: a guided first run, as a list of steps.

Each :class:`Step` says what it shows, then runs one real ``privtool`` command
(printed first, so the user can run it again by hand) through the same entry
point as the console script. A step that fails stops the tour with its error.
A step may accept exit code 1 as a normal outcome (an attack that finds a
breach, an audit whose verdict is not PASS).
"""

from __future__ import annotations

import shlex
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import click

from ..errors import UserError
from .common import app, stdout_console, styled

FILES = {
    "data": "baskets.dat",
    "plain": "plain.json",
    "plain_trail": "plain-trail.json",
    "safe": "safe.json",
    "safe_trail": "safe-trail.json",
    "audit": "audit.html",
}
"""The tour's files, by the placeholder its commands name them with."""


@dataclass(frozen=True)
class TourSettings:
    """What every step may use: the working folder, record count and seed."""

    directory: Path
    records: int
    seed: int

    def arguments(self, command: str) -> list[str]:
        """The words of *command* with its placeholders filled in: ``{records}``,
        ``{seed}`` and one per file of :data:`FILES` (each a path in the folder).

        The template is split into words before filling in, so a folder with
        spaces stays one argument."""
        values: dict[str, object] = {"records": self.records, "seed": self.seed}
        values.update({key: self.directory / name for key, name in FILES.items()})
        return [word.format_map(values) for word in shlex.split(command)]


@dataclass(frozen=True)
class Step:
    """One step of the tour: a title, one sentence of explanation, and the
    ``privtool`` command it runs (a template for :meth:`TourSettings.arguments`)."""

    title: str
    explanation: str
    command: str
    accepted: tuple[int, ...] = (0,)
    """Exit codes that are a normal outcome (an attack that finds a breach exits 1)."""


STEPS: list[Step] = [
    Step(
        "Make some data",
        "privtool synth writes synthetic shopping baskets "
        "(IBM-Quest style, with popular items and itemsets that go together).",
        "synth --records {records} --items 500 --avg-size 6 --max-size 40 --size-distribution lognormal "
        "--seed {seed} --quiet -o {data}",
    ),
    Step(
        "Look at it",
        "privtool stats counts records and items, shows how many items records hold and which items are most common.",
        "stats {data} --top 5",
    ),
    Step(
        "Disassociate it",
        "Disassociation (Terrovitis et al.) clusters the records and splits each cluster into chunks in which every "
        "itemset of up to m=2 items occurs at least k=5 times; the private trail says which record went where.",
        "anonymize {data} --method disassociation --k 5 --m 2 -o {plain} --trail {plain_trail} --quiet",
    ),
    Step(
        "Measure what was lost",
        "Utility metrics compare the release with the original: terms lost to term chunks, top-K itemset deviation, "
        "relative error of pair supports, and how many chunks have the cover problem (PEM).",
        "metrics {plain} --original {data} --trail {plain_trail} --samples 3 --quiet",
    ),
    Step(
        "Attack it",
        "An adversary who knows 2 items of a person tries to single them out; the cover problem (Awad et al.) can "
        "link items to a person with certainty. The plain release claims k^m-anonymity, not cover-freedom, so "
        "those links are risks (no claim covers them); a finding that refuted a claim would be a breach, exit 1.",
        "attack {plain} --original {data} --targets 300 --max-rows 5 --quiet",
        accepted=(0, 1),
    ),
    Step(
        "Make it safe",
        "Safe disassociation removes the cover problem by partial suppression and ghost sub-records; only the trail "
        "knows the ghosts.",
        "sanitize {plain} --sanitizer safe-disassociation --trail {plain_trail} -o {safe} --trail-out {safe_trail} "
        "--quiet",
    ),
    Step(
        "Prove it",
        "privtool verify trusts nothing the anonymiser says: OR-Tools certificates (or a witness) for every "
        "guarantee, checked against the original and the trail.",
        "verify {safe} --original {data} --trail {safe_trail} --quiet",
    ),
    Step(
        "Attack it again",
        "The same attacks on the safe release.",
        "attack {safe} --original {data} --targets 300 --max-rows 5 --quiet",
        accepted=(0, 1),
    ),
    Step(
        "Write the compliance report",
        "privtool audit puts it together for a privacy officer: a verdict, one section per WP29 criterion, the "
        "certificates, attack findings, metrics and provenance, as one self-contained HTML file.",
        "audit {safe} --original {data} --trail {safe_trail} --format html -o {audit} --targets 300 --quiet",
        accepted=(0, 1),
    ),
]


class TourStepFailed(UserError):
    """A step's command exited with an error (its message is already printed)."""


@click.command("tour")
@click.option(
    "--dir",
    "directory",
    default=None,
    type=click.Path(file_okay=False),
    help="Where to write the tour's files (default: a new temporary folder, kept).",
)
@click.option(
    "--records", type=click.IntRange(min=10), default=5000, show_default=True, help="Size of the synthetic dataset."
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the synthetic data.")
@click.pass_context
def command(ctx: click.Context, directory: str | None, records: int, seed: int) -> int:
    """A guided first run: make data, disassociate, measure, attack, make safe, verify, audit."""
    from . import main  # the CLI entry point; imported here as it imports this module

    folder = Path(directory) if directory else Path(tempfile.mkdtemp(prefix="privtool-tour-"))
    folder.mkdir(parents=True, exist_ok=True)
    settings = TourSettings(folder, records, seed)
    plugin_flags = [word for name in app(ctx).blocked for word in ("-p", f"no:{name}")]
    console = stdout_console()
    for number, step in enumerate(STEPS, start=1):
        arguments = settings.arguments(step.command)
        console.rule(styled(f"Step {number} of {len(STEPS)}: {step.title}", "bold"))
        console.print(step.explanation)
        console.print(styled(f"$ privtool {' '.join(arguments)}", "bold"), highlight=False, soft_wrap=True)
        started = time.perf_counter()
        code = main([*plugin_flags, *arguments])
        console.print(styled(f"(step {number} took {time.perf_counter() - started:.1f} s, exit code {code})", "dim"))
        if code not in step.accepted:
            raise TourStepFailed(
                f"tour step {number} ({step.title}) failed with exit code {code}; see the error above."
            )
    console.rule(styled("Done", "bold"))
    report = folder / FILES["audit"]
    if report.is_file():
        console.print(
            styled(f"The compliance report is {report}", "bold"),
            "(open it in a browser).",
            highlight=False,
            soft_wrap=True,
        )
    console.print(f"The tour's files are in {folder}:", highlight=False, soft_wrap=True)
    for path in sorted(folder.iterdir()):
        console.print(f"  {path}  ({path.stat().st_size:,} bytes)", highlight=False, soft_wrap=True)
    return 0
