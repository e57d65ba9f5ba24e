"""How often a turn writes, wakes up and looks around: the timings the runner and the writer share.

Events nobody acts on (text and thinking deltas, round markers, token usage, progress and log
lines) are written in batches: with the next other event, or once the oldest unwritten one is
TEXT_FLUSH_SECONDS old, or when TEXT_FLUSH_COUNT wait. Every other event is written before it is
sent: the user may act on it (stop a call, answer a question, approve), which another worker reads
from the database. The `start` of a new turn is batched too: the request already claimed the
conversation and stored the message, so its row is all there is to write, and the user sees the
turn begin without waiting for it. A few events are sent and never written (UNSTORED_TYPES).
"""

DEFERRED_TYPES = frozenset({"text", "thinking", "round", "usage", "tool_progress", "tool_log"})
TEXT_FLUSH_SECONDS = 0.25
TEXT_FLUSH_COUNT = 64
# Sequence numbers are reserved in the database before they are sent: the claim and every write of
# a running turn set the conversation's last_seq this far past the last number given, and a number
# past the reservation is written before it is sent. A batched event is sent before it is stored;
# should its process die first, the takeover's error and the next answer start after the block, so
# no number a tab was sent is ever given to another event (it skips what it has seen by number).
SEQ_BLOCK = TEXT_FLUSH_COUNT
# Events sent but never stored: an MCP App tool's arguments as the model writes them (several a
# second, each holding all the arguments so far) are superseded by the call's `tool_call`, which a
# reopened conversation reads. They get no sequence number, so a replay resumes around them.
UNSTORED_TYPES = frozenset({"tool_input"})
# A tool call is held back, unsent, until its result comes, for at most an idle tick: most calls
# end by then, and the call and its result are written in one transaction instead of two.
# What comes after a held event waits with it, so the stream keeps its order.
HELD_TYPES = frozenset({"tool_call"})
# A call that reports (progress, a log line) is one the user waits for: its first report releases
# it at once, and the call and that report share the transaction.
RELEASING_TYPES = frozenset({"tool_progress", "tool_log"})
# How often the reader wakes up when nothing comes (disconnect checks, text flushes, heartbeats):
# a held call of a slow tool that reports nothing is sent about this late. Read at each turn's
# start, so a test may change it.
IDLE_TICK_SECONDS = 0.5
# A running turn proves it is alive by writing (the conversation's turn_heartbeat) at least every
# HEARTBEATS_PER_STALE-th of the stale limit, `[ai_mcp] turn_stale_after` (hub_process.py; 90 s, so
# every 15 s, by default): one silent for that long died with its process and may be taken over.
# Several beats per limit: a write delayed by a busy database or process does not make a live turn
# look dead.
HEARTBEATS_PER_STALE = 6
# How often the turns with calls running look for the user's requests about them (stop a call,
# answer its server's question): one query for all the turns of the process (call_requests.py).
REQUEST_POLL_SECONDS = 0.5
# Share of the process's database pool the turns' writers may hold at once. Every request of the
# process (the stream's own, before its route runs) borrows from the same pool, and Odoo's pool
# refuses a borrow when full instead of waiting: writers queue here so requests always find room.
WRITER_SHARE_OF_POOL = 0.5
# A burst of requests may still fill the pool while a writer has its slot (each request borrows its
# connection before any module code runs, and holds it a moment only): the writer waits for one to
# come back, these many seconds between tries (about 20 s in all), instead of ending its turn.
POOL_FULL_WAITS = (0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 3.2, 3.2, 3.2, 3.2, 3.2)
# A turn whose write found its database connection lost tries to store its final error (which says
# so) again after these many seconds (about 15 s in all: a PostgreSQL restart takes a few).
DATABASE_BACK_WAITS = (0.25, 0.5, 1.0, 2.0, 4.0, 8.0)


def heartbeat_seconds(stale_after: float) -> float:
    """How often a running turn writes at least, for a stale limit of `stale_after` seconds."""
    return stale_after / HEARTBEATS_PER_STALE
