"""A running Dask distributed cluster that runs a batch's matches, one a task (``batch --scheduler``).

Only the plumbing: connecting to the scheduler, checking that its workers see
the batch's folders, handing out calls and hearing of their pages, asking
them to stop. What a task does is :mod:`digitise.pipeline`'s. Dask is an
optional extra (``pip install 'digitise[dask]'``), imported only here and
only when a scheduler is given.
"""

from __future__ import annotations

import contextlib
import os
import queue
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from digitise.errors import InputError, MissingDependencyError, OptionError

#: How long (s) a batch waits for the scheduler to answer, and for a first worker to have joined it.
CONNECT_SECONDS = 30.0

#: What to install when Dask is missing.
INSTALL = "pip install 'digitise[dask]'"


def _distributed() -> Any:
    """The ``distributed`` module, or the error saying how to install it."""
    try:
        # imported here: an optional package (Dask, the `dask` extra)
        import distributed
    except ImportError:
        raise MissingDependencyError(f"--scheduler needs Dask distributed, which is not installed: {INSTALL}") \
            from None
    return distributed


@dataclass(frozen=True, slots=True)
class Channel:
    """How a task on a worker tells its batch of a page read, and hears that the batch was stopped."""

    topic: str
    stop: str

    def tell(self, message: str) -> None:
        """Send ``message`` to the batch (called on a worker, inside a task)."""
        # imported here: an optional package (Dask, the `dask` extra)
        from distributed import get_worker

        get_worker().log_event(self.topic, message)

    def stopped(self) -> bool:
        """Whether the batch has asked its tasks to stop (called on a worker, inside a task)."""
        return bool(_distributed().Event(self.stop).is_set())


class Cluster:
    """A batch's connection to a running Dask scheduler (see :func:`connect`)."""

    def __init__(self, client: Any) -> None:
        self._client = client
        batch = uuid.uuid4().hex
        self.channel = Channel(f"digitise-pages-{batch}", f"digitise-stop-{batch}")
        self._heard: queue.SimpleQueue[str] = queue.SimpleQueue()
        # Called on the client's own thread: only queued, the batch's thread passes them on.
        client.subscribe_topic(self.channel.topic, lambda event: self._heard.put(str(event[1])))

    def submit(self, call: Callable[..., Any], *args: Any, key: str, priority: int) -> Any:
        """Run ``call(*args)`` as one task (higher ``priority`` first); a Dask future.

        A task whose worker is lost is run again on another by the scheduler
        (its ``distributed.scheduler.allowed-failures``, 3 by default), then
        fails with :class:`distributed.KilledWorker` (see :meth:`lost`). An
        exception the call raises is not retried: a bug would only repeat.
        """
        return self._client.submit(call, *args, key=key, priority=priority, pure=False, retries=0)

    def heard(self) -> list[str]:
        """The messages tasks told (:meth:`Channel.tell`) since the last call."""
        messages = []
        with contextlib.suppress(queue.Empty):
            while True:
                messages.append(self._heard.get_nowait())
        return messages

    @staticmethod
    def lost(exc: BaseException) -> bool:
        """Whether ``exc`` says the task's workers died, each time it was tried."""
        return isinstance(exc, _distributed().KilledWorker)

    def stop(self) -> None:
        """Ask every task of this batch to stop at its next page (one not started stops at once)."""
        _distributed().Event(self.channel.stop, client=self._client).set()

    def cancel(self, futures: Sequence[Any]) -> None:
        """Drop ``futures``: the ones not started never run."""
        if futures:
            self._client.cancel(list(futures), force=True)


def _unseen(paths: Sequence[str]) -> list[str]:
    """Of ``paths`` (folders), those this worker cannot see (run on every worker)."""
    return [path for path in paths if not os.path.isdir(path)]


@contextlib.contextmanager
def connect(address: str, shared: Sequence[Path]) -> Iterator[Cluster]:
    """A connection to the Dask scheduler at ``address`` (``tcp://HOST:PORT``), closed at the end.

    Raises :class:`OptionError` when the scheduler does not answer or has no
    worker, and :class:`InputError` when a worker cannot see one of the
    folders ``shared`` (inputs and outputs must be on a file system every
    worker mounts at the same path).
    """
    distributed = _distributed()
    try:
        client = distributed.Client(address, timeout=CONNECT_SECONDS, set_as_default=False)
    except (OSError, TimeoutError, ValueError, TypeError) as exc:
        raise OptionError(f"no Dask scheduler answers there: {exc}", address) from None
    try:
        try:
            client.wait_for_workers(1, timeout=CONNECT_SECONDS)
        except TimeoutError:
            raise OptionError(f"the Dask scheduler has no worker (none joined in {CONNECT_SECONDS:.0f} s): start "
                              "some with `dask worker ADDRESS` (docs/distributed.md)", address) from None
        folders = [str(Path(path).absolute()) for path in shared]
        try:
            # The scheduler unpickles the tasks too: it needs digitise as much as the workers do.
            client.run_on_scheduler(_unseen, [])
        except Exception as exc:  # noqa: BLE001 - whatever the scheduler met, sent back as it was
            raise OptionError(f"the scheduler cannot load digitise (installed there, the same version?): {exc}",
                              address) from None
        try:
            unseen: dict[str, list[str]] = client.run(_unseen, folders)
        except Exception as exc:  # noqa: BLE001 - whatever a worker met, sent back as it was
            raise OptionError(f"a worker cannot run digitise (installed there, the same version?): {exc}",
                              address) from None
        for worker, missing in sorted(unseen.items()):
            if missing:
                raise InputError(f"the Dask worker {worker} cannot see this folder: inputs and outputs must be on a "
                                 "file system every worker mounts at the same path (docs/distributed.md)", missing[0])
        yield Cluster(client)
    finally:
        client.close()
