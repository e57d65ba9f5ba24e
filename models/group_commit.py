"""One transaction for the writes of many turns: group commit, per database and process.

Every running turn writes its events as they come, and each write used to be a transaction of its
own: a cursor borrowed from the pool (a round trip to reset it), BEGIN, the statements, COMMIT.
With many turns at once that overhead was a third of the writer's CPU (issue 13's profile), and
each turn held a pool connection while it wrote. Here the writes that arrive while one is being
committed wait, and the next of them writes them all in one transaction, each in a savepoint so
one failing write fails only its own turn. A write still returns only once it is committed: the
turn sends an event only after it is stored. A few transactions run at once (LANES), so one
batch's round trips to the database do not hold up every turn of the process.

No thread of its own: the caller whose write comes first while nothing is being written does the
writing (threads in the threaded server, greenlets in the gevent worker alike).
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

_logger = logging.getLogger(__name__)

LANES = 4


class _Write:
    __slots__ = ("work", "result", "error", "woken", "leads")

    def __init__(self, work: Callable[[Any], Any]) -> None:
        self.work = work
        self.result: Any = None
        self.error: BaseException | None = None
        self.woken = threading.Event()
        self.leads = False  # woken to write a batch of its own and the writes queued then

    def outcome(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.result


class GroupCommit:
    """The writes of one database in this process, in at most `lanes` transactions at once."""

    def __init__(self, registry: Any, lanes: int = LANES) -> None:
        self.registry = registry
        self.lanes = lanes
        self._lock = threading.Lock()
        self._queue: list[_Write] = []
        self._writing = 0  # transactions being written

    def run(self, work: Callable[[Any], Any]) -> Any:
        """`work(cr)` in a transaction shared with the writes of other turns; its result once
        committed. An exception of `work` is raised here, and undoes only `work`'s statements."""
        write = _Write(work)
        with self._lock:
            leads = self._writing < self.lanes
            if leads:
                self._writing += 1
            else:
                self._queue.append(write)
        if not leads:
            write.woken.wait()
            if not write.leads:
                return write.outcome()
        self._write_batch(write)
        return write.outcome()

    def _write_batch(self, first: _Write) -> None:
        # a write is in one batch only: the leader's own was never queued, and the queue is
        # taken, or its head made the next leader, under the lock
        with self._lock:
            batch, self._queue = [first, *self._queue], []
        try:
            self._commit(batch)
        finally:
            with self._lock:
                following = self._queue.pop(0) if self._queue else None
                if following is None:
                    self._writing -= 1
                else:
                    following.leads = True
            for write in batch:
                write.woken.set()
            if following is not None:
                following.woken.set()

    def _commit(self, batch: list[_Write]) -> None:
        try:
            with self.registry.cursor() as cr:
                if len(batch) == 1:
                    # alone in its transaction: what fails rolls back only this write anyway
                    batch[0].result = batch[0].work(cr)
                    return
                for write in batch:
                    try:
                        with cr.savepoint():
                            write.result = write.work(cr)
                    except Exception as exc:  # noqa: BLE001 - the write's own turn is told
                        write.error = exc
        except BaseException as exc:
            # no write of the batch is stored: every turn is told
            if len(batch) > 1:
                _logger.warning("AI turn writes: a transaction of %d writes failed: %s", len(batch), exc)
            interrupted = exc if isinstance(exc, Exception) else RuntimeError("The write was interrupted.")
            for write in batch:
                write.error = write.error or interrupted
                write.result = None
            if not isinstance(exc, Exception):
                raise


_batches: dict[str, GroupCommit] = {}
_batches_lock = threading.Lock()


def group_commit(registry: Any) -> GroupCommit:
    """The GroupCommit of `registry`'s database in this process."""
    with _batches_lock:
        batches = _batches.get(registry.db_name)
        if batches is None or batches.registry is not registry:
            # a registry rebuilt (module update) writes through its own
            batches = _batches[registry.db_name] = GroupCommit(registry)
        return batches
