"""The database cursors a process's turns write with, within their share of the pool, and the one
poller of the user's requests about running calls that all of them share."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable

from psycopg2.pool import PoolError

import odoo
from odoo.tools import config

from .call_requests import CallRequests
from .pacing import POOL_FULL_WAITS, REQUEST_POLL_SECONDS, WRITER_SHARE_OF_POOL

_logger = logging.getLogger(__name__)

_write_slots: threading.BoundedSemaphore | None = None
_write_slots_lock = threading.Lock()


def write_slots() -> threading.BoundedSemaphore:
    """The process's slots for writer cursors, sized from its pool: `db_maxconn_gevent` in the
    gevent worker (default `db_maxconn`), `db_maxconn` elsewhere, as odoo.sql_db sizes it."""
    global _write_slots  # noqa: PLW0603 - one per process, created where the pool size is known
    with _write_slots_lock:
        if _write_slots is None:
            maxconn = int((odoo.evented and config["db_maxconn_gevent"]) or config["db_maxconn"])
            slots = max(1, int(maxconn * WRITER_SHARE_OF_POOL))
            _logger.info("AI turn writers: at most %d database connections at once (pool of %d)", slots, maxconn)
            _write_slots = threading.BoundedSemaphore(slots)
        return _write_slots


@contextlib.contextmanager
def turn_cursor(registry, sleep: Callable[[float], None] = time.sleep):
    """A cursor of its own for a turn's writes and looks, within the writers' share of the pool;
    while the pool is full, it waits for a connection to come back (`sleep`: gevent's in the gevent
    worker, which patches time.sleep)."""
    with write_slots(), _borrow(registry, sleep) as cr:
        yield cr


def _borrow(registry, sleep: Callable[[float], None]):
    for wait in POOL_FULL_WAITS:
        try:
            return registry.cursor()
        except PoolError:
            _logger.debug("AI turn writer: the database pool is full, trying again in %.2f s", wait)
            sleep(wait)
    return registry.cursor()


call_requests = CallRequests(turn_cursor, REQUEST_POLL_SECONDS)
