"""The Dask executor: per-unit work on a Dask cluster (``--executor dask``).

With ``--scheduler ADDRESS`` it connects to a running scheduler (a multi-machine
cluster: every worker needs privtool installed, the same version); without one it
starts a :class:`distributed.LocalCluster` of ``workers`` single-threaded worker
processes on this machine and stops it on :meth:`close`. Like every executor,
:meth:`imap` returns results in input order, so a release made here is
byte-identical to the serial one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from .errors import ParameterError, UserError

T = TypeVar("T")
R = TypeVar("R")


class DaskExecutor:
    name = "dask"

    def __init__(self, scheduler: str | None = None, workers: int | None = None) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:  # pragma: no cover - dask is a declared dependency
            raise ParameterError("--executor dask needs the dask[distributed] package installed.") from None
        self._cluster: Any = None
        if scheduler:
            try:
                self._client = Client(scheduler, timeout="10s")
            except (OSError, TimeoutError) as exc:
                raise UserError(f"cannot reach the Dask scheduler at {scheduler} ({exc}).") from None
        else:
            import os

            self._cluster = LocalCluster(
                n_workers=workers or os.cpu_count() or 1,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
            )
            self._client = Client(self._cluster)
        self.workers = len(self._client.scheduler_info().get("workers", {})) or (workers or 1)

    def imap(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        futures = self._client.map(fn, list(items), pure=False, batch_size=256)
        return (future.result() for future in futures)

    def close(self) -> None:
        self._client.close()
        if self._cluster is not None:
            self._cluster.close()
