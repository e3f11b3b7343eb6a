"""The Dask executor: per-unit work on a Dask cluster (``--executor dask``).

With ``--scheduler ADDRESS`` it connects to a running scheduler (a multi-machine
cluster: every worker needs privtool installed, the same version); without one it
starts a :class:`distributed.LocalCluster` of ``workers`` single-threaded worker
processes on this machine and stops it on :meth:`close`. Like every executor,
:meth:`imap` returns results in input order, so a release made here is
byte-identical to the serial one.

Items travel in batches (:func:`privtool.executors.batch_size` items, and at
most :data:`privtool.executors.BATCH_BYTES` of the payload they state,
:func:`privtool.executors.batches`), one Dask task per batch, and at most
:data:`privtool.executors.IN_FLIGHT_PER_WORKER` batches per worker are submitted ahead of the one
being consumed. A task costs the scheduler about a
millisecond, so one task per chunk made cheap checks (cover-freedom of 64k
chunks) take minutes; and submitting every unit at once kept every unit and its
result in the client's memory for the whole map.

The mapped function (possibly a partial carrying large numpy arrays) goes
to the cluster once, not with each batch (:func:`shared_on_cluster`). Dask's
comm layer holds a copy of whatever it sends while sending it, so the function's
arrays are sent one buffer at a time: the driver's peak grows by the largest
buffer, not by the whole function.

A batch is pickled by the driver into three parts (:func:`packed`: the pickle
header, the offsets of its arrays' buffers, and those buffers joined in one byte
array), so a task has three arguments however many arrays its items hold (one
argument or one scatter per array made verify three times slower on many small
chunk batches). A task's arguments travel inside the task graph, through the
scheduler, and Dask warns about a graph above 10 MB ("Sending large graph"): the
joined buffers of a large batch, such as the slices of a quarter million item
occurrences that :func:`privtool.release_slices.checked_content` checks, are
therefore scattered to a worker first (:data:`SCATTER_BYTES`) and its task only
names them.

A stage's fixed cost is mostly the cluster's start (docs/executors.md, "The
fixed cost of a Dask stage"). A command makes its executor as it begins
(:func:`privtool.cli.common.run_options`), before it reads anything. In a
process whose only thread is the one making the executor, as a command's is
then, a local cluster starts at once and its workers are forked from this
process (:func:`start_method`): they inherit Dask, numpy and privtool
imported, and the process has no thread of its own that could hold a lock at
the fork. Otherwise the cluster starts, or the executor connects to
``scheduler``, in a background thread while the input is read, and
:meth:`imap` waits for it only when it needs the cluster; a local cluster's
workers are then forked from one fork server, which imports
:data:`WORKER_PRELOAD` once for all of them.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cached_property
from itertools import pairwise
from typing import Any, TypeVar

import cloudpickle
import numpy as np

from .arrays import offsets_of
from .errors import ParameterError, UserError
from .executors import fork_is_safe, in_order_window

T = TypeVar("T")
R = TypeVar("R")

SCATTER_BYTES = 1 << 20
"""A batch whose joined buffers hold at least this many bytes scatters them
instead of sending them inside its task (Dask warns at 10 MB)."""

WORKER_PRELOAD = ("distributed", "numpy", "cloudpickle", __name__)
"""What the fork server imports before forking workers: what every worker
runs (Dask's worker, numpy, and this module's :func:`apply_batch` and
:func:`rebuilt`). Dask's own list (:func:`distributed.utils.get_mp_context`)
adds every optional package it knows, pandas included, and imports them in the
driver too; privtool's tasks need none of them (a task that does imports it
on the worker)."""


LOCAL_WORKER_CONFIG = {"distributed.worker.profile.enabled": False}
"""Dask settings a local cluster's workers start with (besides how they are
started, :func:`start_method`): without Dask's statistical profiler, which samples
every worker's stack 100 times a second for a dashboard privtool does not
start. It cost each worker 0.013 CPU s per second of the stage, busy or idle
(0.033 against 0.020, docs/results/scale.md, "Session 10: verify at 5M"), so
more per record in the stages whose wall time per record is largest, the
small ones ("Session 11: verify at the small end")."""


def pickled(obj: Any, dumps: Callable[..., bytes] = pickle.dumps) -> list[Any]:
    """``obj`` pickled (protocol 5) as ``[header, *buffers]``: the header holds
    everything but its contiguous arrays, which come after it as byte arrays
    (out of band, not copied); :func:`rebuilt` puts them together again."""
    buffers: list[pickle.PickleBuffer] = []
    header = dumps(obj, protocol=5, buffer_callback=buffers.append)
    return [header, *(np.frombuffer(buffer.raw(), dtype=np.uint8) for buffer in buffers)]


def rebuilt(header: bytes, *buffers: np.ndarray) -> Any:
    """The object :func:`pickled` into ``[header, *buffers]`` (top level, so
    Dask can pickle it); its arrays view the buffers."""
    return pickle.loads(header, buffers=buffers)


def packed(obj: Any) -> tuple[bytes, np.ndarray, np.ndarray]:
    """``obj`` pickled (:func:`pickled`) as its header, the CSR offsets of its
    buffers, and the buffers joined in one byte array (one copy of the arrays' bytes)."""
    header, *buffers = pickled(obj)
    joined = np.concatenate(buffers) if buffers else np.empty(0, dtype=np.uint8)
    return header, offsets_of(map(len, buffers)), joined


def apply_batch(fn: Callable[[T], R], header: bytes, offsets: np.ndarray, joined: np.ndarray) -> list[R]:
    """Run ``fn`` on a worker over the batch :func:`packed` into ``header, offsets, joined``."""
    buffers = [joined[a:b] for a, b in pairwise(offsets.tolist())]
    return [fn(item) for item in rebuilt(header, *buffers)]


def shared_on_cluster(client: Any, obj: Any) -> Any:
    """A future of ``obj`` on the cluster, sent from the driver once and a
    buffer at a time: pickled (:func:`pickled`, with cloudpickle) with its
    contiguous arrays out of band, each scattered on its own, and put together
    by a task on a worker; Dask moves the result between workers as any task's
    result."""
    header, *buffers = pickled(obj, cloudpickle.dumps)
    if not buffers:
        return client.scatter(obj, broadcast=True, hash=False)
    pieces = [client.scatter(buffer, hash=False) for buffer in buffers]
    return client.submit(rebuilt, header, *pieces, pure=False)


def start_method() -> str:
    """How a local cluster started now by the calling thread has its nannies
    start their worker processes (``distributed.worker.multiprocessing-method``).

    ``fork`` when forking is safe now (:func:`privtool.executors.fork_is_safe`):
    a worker is then a copy of this process, with Dask, numpy and privtool
    imported, and starts in about 0.3 s of wall time. Only Dask's own threads,
    started for the cluster while the caller waits for it, run at the fork;
    Dask supports forked workers. Otherwise ``forkserver``: workers are forked
    from a single-threaded server that imports :data:`WORKER_PRELOAD` (about
    0.5 s of CPU, and 0.7 s of wall time before the first worker is ready).
    ``spawn``, Dask's default, makes every worker a fresh interpreter that
    imports everything anew and exits through a full shutdown."""
    return "fork" if fork_is_safe() else "forkserver"


def preload_workers() -> None:
    """Make the fork server import :data:`WORKER_PRELOAD`
    and keep Dask from replacing that list with its own when a nanny asks for
    the context (its ``_forkserver_preload_set`` flag; without the flag the
    workers still start, only slower). No effect once a fork server runs, as
    when a process pool of this process started one."""
    import multiprocessing

    import distributed.utils

    multiprocessing.get_context("forkserver").set_forkserver_preload(list(WORKER_PRELOAD))
    distributed.utils._forkserver_preload_set = True


def connected(scheduler: str | None, workers: int, method: str = "forkserver") -> tuple[Any, Any]:
    """A Dask client and the local cluster it talks to (None with ``scheduler``):
    connected to the running scheduler at ``scheduler``, or to a new
    :class:`distributed.LocalCluster` of ``workers`` single-threaded worker
    processes started by ``method`` (:func:`start_method`)."""
    try:
        import dask
        from dask.distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - dask is a declared dependency
        raise ParameterError("--executor dask needs the dask[distributed] package installed.") from None
    if scheduler:
        try:
            return Client(scheduler, timeout="10s"), None
        except (OSError, TimeoutError) as exc:
            raise UserError(f"cannot reach the Dask scheduler at {scheduler} ({exc}).") from None
    if method == "forkserver":
        preload_workers()
    with dask.config.set({**LOCAL_WORKER_CONFIG, "distributed.worker.multiprocessing-method": method}):
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,  # no dashboard; its HTTP server (health checks) on a free port, so
            scheduler_kwargs={"dashboard_address": ":0"},  # runs side by side never warn that 8787 is taken
        )
    return Client(cluster), cluster


class DaskExecutor:
    """Per-unit work on a Dask cluster that starts (or is connected to) from the
    moment the executor is made, at once or in the background; see the module
    docstring."""

    name = "dask"

    def __init__(self, scheduler: str | None = None, workers: int | None = None) -> None:
        self._requested = workers
        self._local_workers = None if scheduler else workers or os.cpu_count() or 1
        self._ready: Future[tuple[Any, Any]]
        if self._local_workers and start_method() == "fork":
            self._ready = Future()
            self._ready.set_result(connected(None, self._local_workers, "fork"))
            return
        starter = ThreadPoolExecutor(1, thread_name_prefix="privtool-dask-start")
        self._ready = starter.submit(connected, scheduler, self._local_workers or 0)
        starter.shutdown(wait=False)

    @property
    def _client(self) -> Any:
        """The client, once the cluster has started (raises what starting it raised)."""
        return self._ready.result()[0]

    @cached_property
    def workers(self) -> int:
        """The local cluster's workers, or those of the running scheduler (waits to connect)."""
        if self._local_workers:
            return self._local_workers
        return len(self._client.scheduler_info().get("workers", {})) or (self._requested or 1)

    def imap(self, fn: Callable[[T], R], items: Sequence[T]) -> Iterator[R]:
        """Results batch by batch in input order, with a bounded window of batches in flight."""
        shared_fn = shared_on_cluster(self._client, fn)

        def submit(batch: list[T]) -> Any:
            header, offsets, joined = packed(batch)
            data: Any = self._client.scatter(joined, hash=False) if len(joined) >= SCATTER_BYTES else joined
            return self._client.submit(apply_batch, shared_fn, header, offsets, data, pure=False)

        return in_order_window(submit, items, self.workers)

    def close(self) -> None:
        """Stop the local cluster (waiting for it to finish starting) or leave
        the running scheduler; raises what starting or connecting raised, so a
        run that never needed the cluster still reports an unreachable scheduler."""
        client, cluster = self._ready.result()
        client.close()
        if cluster is not None:
            cluster.close()
