"""Where a sweep's runs execute: in this process, on a local process pool, or on a dask.distributed cluster.

Runs are independent simulations of a few seconds each, so any pool serves; results come back in the
order of the tasks whatever order they finish in. ``workers=1`` runs them here, one after the other
(the sequential baseline). A cluster address (``tcp://host:8786``) sends them to a dask.distributed
scheduler that is already running: dask.distributed is pure Python (no daemon or native runtime to
install beside kubesched), a ``LocalCluster`` starts in about a second, and ``dask worker`` processes
join from any machine with kubesched installed. It comes with the ``distributed`` extra.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor

from kubesched.sim.sweep import RunMetrics, SweepTask, run_task
from kubesched.util.extras import require_extra

#: How long connecting to a cluster's scheduler may take, in seconds.
CONNECT_TIMEOUT = 30


def run_tasks(
    tasks: Sequence[SweepTask],
    *,
    workers: int | None = None,
    address: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[RunMetrics]:
    """Every task's metrics, in task order (see the module docstring for where they run)."""
    if address:
        return _on_dask(tasks, address, progress)
    workers = workers or os.cpu_count() or 1
    if workers == 1 or len(tasks) <= 1:
        out = []
        for task in tasks:
            out.append(run_task(task))
            if progress is not None:
                progress(len(out), len(tasks))
        return out
    results: list[RunMetrics | None] = [None] * len(tasks)
    with ProcessPoolExecutor(max_workers=min(workers, len(tasks))) as pool:
        futures = {pool.submit(run_task, task): i for i, task in enumerate(tasks)}
        from concurrent.futures import as_completed

        for done, future in enumerate(as_completed(futures), 1):
            results[futures[future]] = future.result()
            if progress is not None:
                progress(done, len(tasks))
    return [r for r in results if r is not None]


def _on_dask(tasks: Sequence[SweepTask], address: str, progress: Callable[[int, int], None] | None) -> list[RunMetrics]:
    require_extra("distributed", "sweep --address", ("distributed",))
    from distributed import Client, as_completed

    client = Client(address, timeout=CONNECT_TIMEOUT)
    try:
        futures = client.map(run_task, list(tasks), pure=False)
        index = {future.key: i for i, future in enumerate(futures)}
        results: list[RunMetrics | None] = [None] * len(tasks)
        for done, future in enumerate(as_completed(futures), 1):
            results[index[future.key]] = future.result()
            if progress is not None:
                progress(done, len(tasks))
        return [r for r in results if r is not None]
    finally:
        client.close()
