"""The terminal progress bars: counted work shows ``done/total``; a stage that
counts nothing shows a full bar and no count (never ``0/0``)."""

from __future__ import annotations

import io

from rich.console import Console

from privtool.progress import RichProgress


def _rendered(run) -> str:
    out = io.StringIO()
    console = Console(file=out, width=120, force_terminal=False, color_system=None)
    with RichProgress(console) as progress:
        run(progress)
    return out.getvalue()


def test_a_counted_task_shows_done_over_total() -> None:
    def run(progress: RichProgress) -> None:
        with progress.task("mapping clusters", 3) as task:
            for _ in range(3):
                task.advance()

    assert "3/3" in _rendered(run)


def test_a_stage_that_counts_nothing_shows_no_count() -> None:
    def run(progress: RichProgress) -> None:
        with progress.task("refining", None):
            pass

    text = _rendered(run)
    assert "refining" in text
    assert "0/0" not in text and "0/1" not in text and "1/1" not in text


def test_a_stage_of_unknown_size_shows_what_it_counted() -> None:
    def run(progress: RichProgress) -> None:
        with progress.task("hiding rules", None) as task:
            task.advance(4)

    assert "4/4" in _rendered(run)
