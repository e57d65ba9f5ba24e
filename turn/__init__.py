"""One turn of a conversation, from the claimed conversation to the stored events.

The path of a turn: the widget's composer POSTs to /ai_mcp/chat/stream (controllers/chat.py);
`ai.conversation` checks access, claims the conversation (models/conversation/claim.py) and
prepares a `ChatTurn` (runner.py) holding plain data only; the controller then iterates it after the
request's cursor is closed. The runner drives the agent loop (services/loop/agent_loop.py) on the hub's
event loop, and its `TurnWriter` (writer.py) stores every event, with what it means for the
conversation (the writers of event_dispatch.py), in short transactions of its own before the controller
sends it to the browser as Server-Sent Events. The widget (static/src/chat) renders the events as
they come, and a reconnecting tab reads the stored ones by sequence number.

Nothing here is an Odoo model: the models translate records into the services' specs, this package
turns the loop's events back into records.
"""
