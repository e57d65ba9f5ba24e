"""The turns' writes of one process share transactions (models/group_commit.py)."""
import threading

from psycopg2 import errors as pg_errors

from odoo.tests import TransactionCase, tagged
from odoo.tools import mute_logger

from ..models.group_commit import GroupCommit

WRITERS = 6


class CountingRegistry:
    """The test's registry, counting the transactions (cursors) the writes open."""

    def __init__(self, registry):
        self.registry = registry
        self.db_name = registry.db_name
        self.cursors = 0

    def cursor(self):
        self.cursors += 1
        return self.registry.cursor()


@tagged("post_install", "-at_install")
class TestGroupCommit(TransactionCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # the writes borrow cursors from the registry, as the chat turns do, inside the test's transaction
        cls.registry.enter_test_mode(cls.cr)
        cls.addClassCleanup(cls.registry.leave_test_mode)
        cls.cr.execute("CREATE TEMPORARY TABLE ai_mcp_group_commit_test (writer int PRIMARY KEY)")

    def _write_at_once(self, works):
        """Runs works[0] alone in the one lane, and the others while it is being written: they
        queue behind it."""
        registry = CountingRegistry(self.registry)
        batches = GroupCommit(registry, lanes=1)
        first_started, queued = threading.Event(), threading.Event()
        results, errors = {}, {}

        def first(cr):
            first_started.set()
            queued.wait(10)
            return works[0](cr)

        def writer(index, work):
            try:
                results[index] = batches.run(work)
            except Exception as exc:  # noqa: BLE001 - the writer's own error, checked below
                errors[index] = exc

        threads = [threading.Thread(target=writer, args=(0, first))]
        threads[0].start()
        first_started.wait(10)
        for index, work in enumerate(works[1:], start=1):
            threads.append(threading.Thread(target=writer, args=(index, work)))
            threads[-1].start()
        while len(batches._queue) < len(works) - 1:
            threading.Event().wait(0.01)
        queued.set()
        for thread in threads:
            thread.join(30)
        return results, errors, registry.cursors

    @staticmethod
    def _insert(index):
        def work(cr):
            cr.execute("INSERT INTO ai_mcp_group_commit_test (writer) VALUES (%s) RETURNING writer", (index,))
            return cr.fetchone()[0]
        return work

    def _stored(self):
        self.cr.execute("SELECT writer FROM ai_mcp_group_commit_test ORDER BY writer")
        return [row[0] for row in self.cr.fetchall()]

    def test_writes_that_wait_are_written_together_each_with_its_own_result(self):
        results, errors, transactions = self._write_at_once([self._insert(i) for i in range(WRITERS)])
        self.assertEqual(errors, {})
        self.assertEqual(results, {i: i for i in range(WRITERS)})
        # the first alone, then the five that waited for it in one transaction
        self.assertEqual(transactions, 2)
        self.assertEqual(self._stored(), list(range(WRITERS)))

    def test_a_failing_write_fails_alone_and_the_others_are_stored(self):
        def duplicate(cr):
            cr.execute("INSERT INTO ai_mcp_group_commit_test (writer) VALUES (1)")  # writer 1 is there
        works = [self._insert(0), self._insert(1), duplicate, self._insert(3), self._insert(4)]
        with mute_logger("odoo.sql_db"):
            results, errors, _transactions = self._write_at_once(works)
        self.assertEqual(list(errors), [2])
        self.assertIsInstance(errors[2], pg_errors.UniqueViolation)
        self.assertEqual(results, {0: 0, 1: 1, 3: 3, 4: 4})
        self.assertEqual(self._stored(), [0, 1, 3, 4])
