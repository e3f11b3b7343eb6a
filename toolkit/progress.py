"""Progress bars on the terminal (rich), one task per stage, drawn on stderr."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from .context import ProgressTask


class _RichTask:
    def __init__(self, progress: Progress, task_id: TaskID) -> None:
        self._progress = progress
        self._task_id = task_id

    def advance(self, amount: int = 1) -> None:
        self._progress.advance(self._task_id, amount)


class _CountColumn(MofNCompleteColumn):
    """``done/total`` for a task that counts units; nothing for a stage that never
    counted any (a bar reading ``0/0`` would suggest no work was done)."""

    def render(self, task: Task) -> Text:
        if task.fields.get("uncounted"):
            return Text("")
        return super().render(task)


class RichProgress:
    """A :class:`~privtool.context.ProgressReporter` drawing rich bars.

    Use as a context manager around the run; each ``task`` adds one bar that
    completes when its block ends.
    """

    def __init__(self, console: Console | None = None, enabled: bool = True) -> None:
        self._progress = Progress(
            SpinnerColumn(),
            # a description may hold data (a file or plugin name): never read it as markup
            TextColumn("{task.description}", style="progress.description", markup=False),
            BarColumn(),
            _CountColumn(),
            TimeElapsedColumn(),
            console=console or Console(stderr=True),
            disable=not enabled,
            transient=False,
        )

    def __enter__(self) -> RichProgress:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()

    @contextmanager
    def task(self, description: str, total: int | None) -> Iterator[ProgressTask]:
        task_id = self._progress.add_task(description, total=total, uncounted=False)
        try:
            yield _RichTask(self._progress, task_id)
        finally:
            if total is None:
                done = next(t.completed for t in self._progress.tasks if t.id == task_id)
                if done:
                    self._progress.update(task_id, total=done)
                else:  # a stage that counted nothing: a full bar, no count
                    self._progress.update(task_id, total=1, completed=1, uncounted=True)
            else:
                self._progress.update(task_id, completed=total)
