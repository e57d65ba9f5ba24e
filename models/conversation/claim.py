"""Which turn holds a conversation: claiming it for a turn, and taking over one whose process died.

A conversation runs one turn at a time. A request claims it under a row lock taken without waiting
(two requests claiming at once: one gets 409), and the state it commits before the answer streams
refuses any later one. A running turn renews its heartbeat as it writes; a turn silent for
`[ai_mcp] turn_stale_after` seconds (hub_process.py) died with its process (or lost its database),
and the next request about the conversation, on whichever node (a message, an answer to a pause,
the history, the stored events a tab reads, a stop), ends it with an error event that says which
of the two happened, and makes the conversation idle again.

The claim reserves the turn's first sequence numbers (turn/pacing.py SEQ_BLOCK): the error of a
takeover comes after every number the dead turn may have sent.
"""

import logging
from datetime import timedelta

import psycopg2.errors

from odoo import _, fields, models

from ...exceptions import ChatRefused
from ...hub_process import turn_stale_after
from ...services.errors import ErrorCode
from ...services.events import ErrorEvent
from ...turn.pacing import SEQ_BLOCK
from ...turn.states import ConversationState, MessageStatus

_logger = logging.getLogger(__name__)


class AiConversation(models.Model):
    _inherit = "ai.conversation"

    def _turn_is_live(self):
        """Whether a turn runs in this conversation now (not one whose process died)."""
        self.ensure_one()
        return self.state == ConversationState.RUNNING and not _stale(self.turn_heartbeat)

    def _busy_refusal(self, state):
        """The 409 for a conversation in `state` that a request may not claim."""
        return busy_refusal(state)

    def _claim(self, expected_states):
        """Marks the conversation running, unless another turn holds it (409), and reserves the
        turn's first SEQ_BLOCK sequence numbers. Returns the last event seq."""
        self.ensure_one()
        state, last_seq = self._lock_state()
        if state not in expected_states:
            raise busy_refusal(state)
        now = fields.Datetime.now()
        self.env.cr.execute(
            "UPDATE ai_conversation SET state = %s, turn_heartbeat = %s, write_date = %s, last_seq = %s WHERE id = %s",
            (ConversationState.RUNNING, now, now, last_seq + SEQ_BLOCK, self.id),
        )
        self.invalidate_recordset(["state", "turn_heartbeat", "write_date", "last_seq"])
        return last_seq

    def _lock_state(self):
        """(state, last_seq) under a row lock taken without waiting (409 when another request holds
        it). A turn left running by a process that died is ended here first."""
        cr = self.env.cr
        self.flush_recordset()
        try:
            with cr.savepoint(flush=False):
                cr.execute(
                    "SELECT state, last_seq, turn_heartbeat FROM ai_conversation WHERE id = %s FOR UPDATE NOWAIT",
                    (self.id,),
                )
                state, last_seq, heartbeat = cr.fetchone()
        except psycopg2.errors.LockNotAvailable:
            raise busy_refusal(ConversationState.RUNNING) from None
        if state == ConversationState.RUNNING and _stale(heartbeat):
            last_seq = self._abandon_stale_turn(last_seq, heartbeat)
            state = ConversationState.IDLE
        return state, last_seq or 0

    def _repair_if_stale(self):
        """A conversation left running by a process that died is idle again, and says so."""
        for conversation in self.sudo():
            if conversation.state == ConversationState.RUNNING and _stale(conversation.turn_heartbeat):
                try:
                    conversation._lock_state()
                except ChatRefused:
                    continue  # someone is taking it over right now

    def _chat_stop(self):
        """The user's stop for a turn their tab does not stream (it opened the conversation while
        the turn ran): a turn whose process died is ended now. {stopped: True} when the
        conversation no longer answers; False while a live turn runs elsewhere (its own tab, or its
        broken stream's server noticing the disconnect, ends it)."""
        self.ensure_one()
        self._repair_if_stale()
        return {"stopped": not self._turn_is_live()}

    def _abandon_stale_turn(self, last_seq, heartbeat):
        """Ends the dead turn, silent since `heartbeat`, with an error after every number it may
        have sent (the reservation in last_seq). Returns that error's seq."""
        seq = last_seq + 1
        error = ErrorEvent(code=ErrorCode.CANCELLED.value, message=self._interruption(heartbeat))
        self._keep_unfinished_reply()
        self.env["ai.conversation.event"].sudo().create(
            {"conversation_id": self.id, "seq": seq, "type": error.type, "payload": error.data()}
        )
        self.env["ai.message"].sudo().search(
            [
                ("conversation_id", "=", self.id),
                ("role", "=", "tool"),
                ("status", "in", (MessageStatus.RUNNING, MessageStatus.PENDING)),
            ]
        ).write({"status": MessageStatus.ERROR, "error_code": error.code})
        self.env["ai.tool.call"]._record_interrupted(self.id, error.code)
        self.env["ai.conversation.event"].flush_model()
        self.env["ai.message"].flush_model()
        self.env.cr.execute(
            "UPDATE ai_conversation SET last_seq = %s, state = %s, turn_heartbeat = NULL WHERE id = %s",
            (seq, ConversationState.IDLE, self.id),
        )
        self.invalidate_recordset(["state", "turn_heartbeat", "last_seq"])
        _logger.info("AI conversation %s: took over a turn whose process stopped", self.id)
        return seq

    def _keep_unfinished_reply(self):
        """The reply the dead turn was streaming, as far as its text was stored, becomes an
        assistant message marked interrupted: what the user was shown of it stays in the
        conversation, and the next turn tells the model it was cut off instead of dropping it."""
        # sudo: the conversation's own records, written by whichever request found the turn dead
        Event = self.env["ai.conversation.event"].sudo()
        # the reply is the run of text (and thinking) its events end with: whatever came before it
        # (its round, a call, an earlier answer's end) was logged already
        before = Event.search(
            [("conversation_id", "=", self.id), ("type", "not in", ("text", "thinking"))], order="seq desc", limit=1
        )
        texts = Event.search(
            [("conversation_id", "=", self.id), ("seq", ">", before.seq or 0), ("type", "=", "text")], order="seq"
        )
        content = "".join(event.payload.get("delta", "") for event in texts)
        if content:
            self.env["ai.message"].sudo().create(
                {
                    "conversation_id": self.id,
                    "role": "assistant",
                    "seq": texts[0].seq,
                    "content": content,
                    "interrupted": True,
                }
            )

    def _interruption(self, heartbeat):
        """What the user is told of a turn silent since `heartbeat`: PostgreSQL started after it
        (the database restarted under the turn, which lost its connection and could write no more),
        or the process running it stopped."""
        self.env.cr.execute("SELECT pg_postmaster_start_time() AT TIME ZONE 'UTC'")
        started = self.env.cr.fetchone()[0]
        if heartbeat and started > heartbeat:
            return self.env._("The answer was interrupted: it lost its database connection (the database restarted).")
        return self.env._("The answer was interrupted: the server running it stopped.")


def _stale(heartbeat):
    return not heartbeat or fields.Datetime.now() - heartbeat > timedelta(seconds=turn_stale_after())


def busy_refusal(state):
    """The 409 for a conversation in `state` that a request may not claim."""
    if state in (ConversationState.AWAITING_APPROVAL, ConversationState.AWAITING_CONFIRMATION):
        message = _("This conversation waits for your answer to its question; answer it first.")
    elif state == ConversationState.AWAITING_AUTH:
        message = _("This conversation waits for you to sign in (or to go on without signing in); answer it first.")
    else:
        message = _("This conversation is answering another message; wait for it to finish.")
    return ChatRefused(ErrorCode.CONVERSATION_BUSY, message)
