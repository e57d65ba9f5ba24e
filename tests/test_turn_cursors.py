"""A turn's writer under a burst: Odoo's pool refuses a borrow when it is full instead of waiting,
and the requests of a burst can fill it while a writer holds its slot. The writer waits for a
connection to come back instead of ending the turn with "The Connection Pool Is Full"."""

from psycopg2.pool import PoolError

from odoo.tests import BaseCase, tagged

from odoo.addons.ai_mcp.turn.cursors import turn_cursor
from odoo.addons.ai_mcp.turn.pacing import POOL_FULL_WAITS


class _Cursor:
    def __init__(self):
        self.closed = False

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.closed = True


class _BusyRegistry:
    """A registry whose pool is full for its first `refusals` borrows."""

    def __init__(self, refusals):
        self.refusals = refusals
        self.borrows = 0

    def cursor(self):
        self.borrows += 1
        if self.borrows <= self.refusals:
            raise PoolError("The Connection Pool Is Full")
        return _Cursor()


@tagged("post_install", "-at_install")
class TestTurnCursors(BaseCase):
    def test_a_writer_waits_for_a_full_pool_and_writes(self):
        registry = _BusyRegistry(refusals=3)
        waits = []
        with turn_cursor(registry, sleep=waits.append) as cr:
            self.assertIsInstance(cr, _Cursor)
        self.assertTrue(cr.closed, "the cursor goes back to the pool")
        self.assertEqual(registry.borrows, 4)
        self.assertEqual(waits, list(POOL_FULL_WAITS[:3]), "waits that grow, no busy loop")

    def test_a_pool_that_stays_full_ends_the_wait_with_its_error(self):
        registry = _BusyRegistry(refusals=len(POOL_FULL_WAITS) + 1)
        waits = []
        with self.assertRaises(PoolError), turn_cursor(registry, sleep=waits.append):
            self.fail("no cursor was borrowed")
        self.assertEqual(waits, list(POOL_FULL_WAITS))
        self.assertGreater(sum(waits), 15, "a burst gets time to pass")
