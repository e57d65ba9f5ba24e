"""What a turn's events write beyond their own rows is written by the writers that name them
(turn/event_dispatch.py): a handler for an event that does not exist fails when its writer is
defined, instead of waiting for an event that never comes, and every event that changes a record
has a writer in the turn's writer."""

from decimal import Decimal
from types import SimpleNamespace

from pydantic import BaseModel

from odoo.tests import TransactionCase, tagged

from odoo.addons.ai_mcp.services.events import EVENT_CLASSES, FoundTool, StartEvent, TextEvent, ToolCallEvent
from odoo.addons.ai_mcp.services.token_usage import Prices
from odoo.addons.ai_mcp.turn.event_dispatch import ROW_ONLY, EventDispatch, StateChange, handlers_of, records
from odoo.addons.ai_mcp.turn.usage_rows import UsageContext
from odoo.addons.ai_mcp.turn.writer import TurnWriter


class ToolCalEvent(BaseModel):
    """A misspelt event: services/events.py has no such class."""

    type: str = "tool_cal"


class Reply:
    def __init__(self):
        self.written = []

    @records(TextEvent)
    def _text(self, env, seq, event):
        self.written.append(f"reply {seq}")

    @records(ToolCallEvent)
    def _tool_call(self, env, seq, event):
        self.written.append(f"message {seq}")
        return event.model_copy(update={"round": 2}), StateChange(rounds=2)


class Audit:
    def __init__(self, written):
        self.written = written

    @records(ToolCallEvent)
    def _tool_call(self, env, seq, event):
        self.written.append(f"audit {seq} round {event.round}")


@tagged("post_install", "-at_install")
class TestEventWriters(TransactionCase):
    def test_a_handler_for_an_event_that_does_not_exist_is_refused(self):
        for not_an_event in (ToolCalEvent, FoundTool, "tool_call", dict):
            with self.subTest(not_an_event), self.assertRaisesRegex(TypeError, "not an event"):
                records(not_an_event)
        with self.assertRaisesRegex(TypeError, "no event"):
            records()

    def test_one_writer_writes_an_event_once(self):
        class Twice:
            @records(TextEvent)
            def _text(self, env, seq, event):
                return None

            @records(StartEvent, TextEvent)
            def _start(self, env, seq, event):
                return None

        with self.assertRaisesRegex(TypeError, "TextEvent"):
            handlers_of(Twice)

    def test_an_event_goes_to_its_writers_in_their_order(self):
        reply = Reply()
        dispatch = EventDispatch(reply, None, Audit(reply.written))
        call = ToolCallEvent(id="c1", name="t", tool="t", title="T", server="s", arguments={}, round=1)
        stored, change = dispatch.apply(None, 7, call)
        self.assertEqual((stored.round, change), (2, StateChange(rounds=2)))
        self.assertEqual(reply.written, ["message 7", "audit 7 round 2"], "the later writer gets the event as stored")
        self.assertEqual(dispatch.apply(None, 8, TextEvent(delta="x")), (TextEvent(delta="x"), None))
        started = StartEvent(assistant="A", max_rounds=3)
        self.assertEqual(dispatch.apply(None, 9, started), (started, None), "an event nobody writes for is kept")
        self.assertEqual(reply.written[-1], "reply 8")

    def test_every_event_that_changes_a_record_has_its_writer_in_a_turn(self):
        usage = UsageContext(
            user_id=1,
            company_id=1,
            currency_id=1,
            assistant_id=1,
            provider_id=1,
            model_id=None,
            model_name="m",
            cloud_service_id=None,
            prices=Prices(),
            report_rate=Decimal(1),
        )
        turn = SimpleNamespace(
            registry=None,
            uid=1,
            context={},
            conversation_id=1,
            last_seq=0,
            audit_known={},
            resuming=False,
            usage=usage,
            spend=None,
        )
        written = set(TurnWriter(turn).records.handlers)
        self.assertLessEqual(ROW_ONLY, set(EVENT_CLASSES))
        self.assertEqual(written & ROW_ONLY, set(), "an event written alone has no writer")
        self.assertEqual(set(EVENT_CLASSES) - ROW_ONLY - written, set(), "events that change a record but no writer")
