"""The chat's HTTP surface: JSON in, Server-Sent Events out (the event wire: services/sse.py).

Only HTTP lives here: authentication, CSRF, input parsing, SSE framing, heartbeats, and noticing
that the client went away (closing the turn's iterator cancels the turn). Access checks, the
conversation's state and everything written live in the models (ai.conversation) and turn/.
"""

import json
import logging
import re
import select
import socket
import time

from pydantic import StrictInt, TypeAdapter, ValidationError

from odoo import _, http
from odoo.http import Response, request

from ..exceptions import ChatRefused
from ..odoo_compat import JSON_ROUTE
from ..services.errors import ErrorCode
from ..services.sse import HEARTBEAT, encode_event
from .refusals import answer, refused

_logger = logging.getLogger(__name__)

CSRF_HEADER = "X-CSRF-Token"
# an SSE comment this often keeps proxies from closing a stream that is quiet (a slow tool)
SSE_KEEPALIVE_SECONDS = 15.0
SSE_CONTENT_TYPE = "text/event-stream; charset=utf-8"
SSE_HEADERS = [("Cache-Control", "no-cache"), ("X-Accel-Buffering", "no")]
# far more than the widget's requests nest (approvals: 2 levels), far less than Python recurses
MAX_JSON_DEPTH = 32
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
# the record ids a streamed route's body may name: a JSON whole number, or null/absent for none
RECORD_ID_FIELDS = ("assistant_id", "conversation_id", "cloud_service_id")
_RECORD_ID = TypeAdapter(StrictInt | None)


class ChatController(http.Controller):
    # -- streamed turns --------------------------------------------------------------------------

    @http.route("/ai_mcp/chat/stream", type="http", auth="user", methods=["POST"], csrf=False)
    def chat_stream(self, **_query):
        """{assistant_id, conversation_id?, cloud_service_id?, message, request_key?, app_call_id?,
        res_model?, res_id?} -> the turn's events. A start sent again with the same request_key after
        all is refused ALREADY_RECEIVED. `app_call_id`: the call whose app sends the message
        (ui/message). `res_model`, `res_id`: the record a new conversation is about ("Ask AI")."""
        try:
            self._check_csrf()
            body = self._json_body()
            turn = request.env["ai.conversation"]._chat_send(
                body.get("assistant_id"),
                body.get("message"),
                conversation_id=body.get("conversation_id"),
                cloud_service_id=body.get("cloud_service_id"),
                request_key=body.get("request_key"),
                app_call_id=body.get("app_call_id"),
                res_model=body.get("res_model"),
                res_id=body.get("res_id"),
            )
        except ChatRefused as refusal:
            return refused(refusal)
        return self._stream(turn)

    @http.route("/ai_mcp/chat/resume", type="http", auth="user", methods=["POST"], csrf=False)
    def chat_resume(self, **_query):
        """{conversation_id, approvals?: {call_id: bool}, go_on?: bool, sign_in?: {declined: [server ids]}}
        -> the rest of the turn."""
        try:
            self._check_csrf()
            body = self._json_body()
            conversation = request.env["ai.conversation"]._chat_own(body.get("conversation_id"))
            turn = conversation._chat_resume(
                approvals=body.get("approvals"), go_on=body.get("go_on"), sign_in=body.get("sign_in")
            )
        except ChatRefused as refusal:
            return refused(refusal)
        return self._stream(turn)

    @http.route("/ai_mcp/chat/<int:conversation_id>/events", type="http", auth="user", methods=["GET"])
    def chat_events(self, conversation_id, after=None, **_query):
        """The stored events after `after` (or the Last-Event-ID header), as SSE; then it ends."""
        try:
            conversation = request.env["ai.conversation"]._chat_readable(conversation_id)
            start = _sequence(after if after not in (None, "") else request.httprequest.headers.get("Last-Event-ID"))
        except ChatRefused as refusal:
            return refused(refusal)
        body = b"".join(
            encode_event(kind, payload, seq) for seq, kind, payload in conversation._chat_events_after(start)
        )
        return Response(body, status=200, headers=SSE_HEADERS, content_type=SSE_CONTENT_TYPE)

    # -- JSON for the widget ---------------------------------------------------------------------

    @http.route("/ai_mcp/assistants", type=JSON_ROUTE, auth="user")
    def assistants(self):
        return request.env["ai.conversation"]._chat_assistant_list()

    @http.route("/ai_mcp/conversations", type=JSON_ROUTE, auth="user")
    def conversations(self, limit=50, assistant_id=None):
        return request.env["ai.conversation"]._chat_conversations(limit=limit, assistant_id=assistant_id)

    @http.route("/ai_mcp/subject", type=JSON_ROUTE, auth="user")
    def subject(self, res_model, res_id):
        """{res_model, res_id, model_name, display_name, url} of a record the user may read, that a
        new conversation is to be about ("Ask AI" on its form); 404 otherwise."""
        return answer(lambda: request.env["ai.conversation"]._chat_subject_card(res_model, res_id))

    @http.route("/ai_mcp/prompts", type=JSON_ROUTE, auth="user")
    def prompts(self, assistant_id, cloud_service_id=None, conversation_id=None):
        """The prompts of the servers the conversation may use: {prompts, warnings}."""
        return answer(
            lambda: request.env["ai.conversation"]._chat_prompts(assistant_id, cloud_service_id, conversation_id)
        )

    @http.route("/ai_mcp/prompts/get", type=JSON_ROUTE, auth="user")
    def prompt_text(self, assistant_id, server_id, name, arguments=None, cloud_service_id=None, conversation_id=None):
        """{text}: what the prompt renders to, sent next as the user's message; or {error}."""

        def render():
            text = request.env["ai.conversation"]._chat_prompt_text(
                assistant_id,
                server_id,
                name,
                arguments,
                cloud_service_id=cloud_service_id,
                conversation_id=conversation_id,
            )
            return {"text": text}

        return answer(render)

    @http.route("/ai_mcp/resources", type=JSON_ROUTE, auth="user")
    def resources(self, assistant_id, cloud_service_id=None, conversation_id=None):
        """The resources and templates of the servers the conversation may use: {servers, warnings}."""
        return answer(
            lambda: request.env["ai.conversation"]._chat_resources(assistant_id, cloud_service_id, conversation_id)
        )

    @http.route("/ai_mcp/resources/read", type=JSON_ROUTE, auth="user")
    def resource_read(
        self,
        assistant_id=None,
        server_id=None,
        uri=None,
        template=None,
        arguments=None,
        cloud_service_id=None,
        conversation_id=None,
        call_id=None,
    ):
        """{uri, server, contents} of a resource: of a server the conversation may use (`server_id`
        with `uri`, or `template` and `arguments`), or a link that call `call_id` returned; or {error}."""
        conversations = request.env["ai.conversation"]

        def read():
            if call_id:
                return conversations._chat_own(conversation_id)._chat_open_link(call_id, uri)
            return conversations._chat_read_resource(
                assistant_id,
                server_id,
                uri=uri,
                template=template,
                arguments=arguments,
                cloud_service_id=cloud_service_id,
                conversation_id=conversation_id,
            )

        return answer(read)

    @http.route("/ai_mcp/complete", type=JSON_ROUTE, auth="user")
    def complete(
        self,
        assistant_id,
        server_id,
        argument,
        value="",
        prompt=None,
        template=None,
        arguments=None,
        cloud_service_id=None,
        conversation_id=None,
    ):
        """{values, has_more}: the server's suggestions for `argument` of prompt `prompt` or of
        resource template `template` as typed so far (`value`), with the values already filled in
        (`arguments`); none when the server does not complete or fails; or {error}."""
        return answer(
            lambda: request.env["ai.conversation"]._chat_complete(
                assistant_id,
                server_id,
                argument,
                value,
                prompt=prompt,
                template=template,
                arguments=arguments,
                cloud_service_id=cloud_service_id,
                conversation_id=conversation_id,
            )
        )

    @http.route("/ai_mcp/conversation/<int:conversation_id>/history", type=JSON_ROUTE, auth="user")
    def conversation_history(self, conversation_id):
        return answer(lambda: request.env["ai.conversation"]._chat_readable(conversation_id)._chat_history())

    @http.route("/ai_mcp/chat/usage", type=JSON_ROUTE, auth="user")
    def chat_usage(self, conversation_id=None):
        """{month: {tokens, costs}, conversation: {tokens, costs} | null}: the user's usage this month
        in the current company, and that of their conversation `conversation_id`."""
        return answer(lambda: request.env["ai.conversation"]._chat_usage(conversation_id))

    @http.route("/ai_mcp/chat/cancel_call", type=JSON_ROUTE, auth="user")
    def chat_cancel_call(self, conversation_id, call_id):
        """Stop one running tool call of the user's conversation; the worker running the turn,
        whichever it is, picks the request up from the database. {cancelling: bool}"""
        return answer(
            lambda: {"cancelling": request.env["ai.conversation"]._chat_own(conversation_id)._chat_cancel_call(call_id)}
        )

    @http.route("/ai_mcp/chat/stop", type=JSON_ROUTE, auth="user")
    def chat_stop(self, conversation_id):
        """Stop the turn of a conversation this tab does not stream: {stopped} (True: it answers no
        more; a turn whose process died is ended now)."""
        return answer(lambda: request.env["ai.conversation"]._chat_own(conversation_id)._chat_stop())

    @http.route("/ai_mcp/chat/elicitation", type=JSON_ROUTE, auth="user")
    def chat_elicitation(self, conversation_id, call_id, elicitation, action, content=None):
        """The user's answer to a running call's question: {answered} or {answered: False, errors}."""
        return answer(
            lambda: (
                request.env["ai.conversation"]
                ._chat_own(conversation_id)
                ._chat_answer_elicitation(call_id, elicitation, action, content)
            )
        )

    @http.route("/ai_mcp/chat/approvals", type=JSON_ROUTE, auth="user")
    def chat_approvals(self, conversation_id):
        """The tool approvals the user remembered in their conversation: [{id, tool, title, server, scope, app}]."""
        return answer(lambda: request.env["ai.conversation"]._chat_own(conversation_id)._chat_approvals())

    @http.route("/ai_mcp/chat/approvals/revoke", type=JSON_ROUTE, auth="user")
    def chat_approvals_revoke(self, conversation_id, approval_id):
        """Forget one remembered approval of the user's conversation: its tool asks again. The list left."""
        return answer(
            lambda: request.env["ai.conversation"]._chat_own(conversation_id)._chat_revoke_approval(approval_id)
        )

    @http.route("/ai_mcp/assistant/<int:assistant_id>/discuss", type=JSON_ROUTE, auth="user")
    def assistant_discuss(self, assistant_id):
        """The user's Discuss chat with the assistant (created when needed): {channel_id}."""

        def chat():
            assistant = request.env["ai.conversation"]._usable_assistant(assistant_id)
            return {"channel_id": assistant.with_env(request.env)._discuss_chat().id}

        return answer(chat)

    # -- helpers ---------------------------------------------------------------------------------

    def _check_csrf(self):
        """A POST with a JSON body carries the token in a header (Odoo only reads form fields)."""
        token = request.httprequest.headers.get(CSRF_HEADER) or request.httprequest.args.get("csrf_token")
        if not request.validate_csrf(token):
            _logger.info("AI chat: CSRF token missing or invalid on %s", request.httprequest.path)
            raise ChatRefused(
                ErrorCode.CSRF_INVALID,
                request.env._("The session expired or the CSRF token is invalid: reload the page."),
            )

    def _json_body(self):
        """The request's JSON object, refused (400, before anything is stored) when it holds what
        the database cannot store or nests deeper than any request of the widget: an error 500
        would be taken for a full database pool and the message sent again."""
        try:
            body = json.loads(request.httprequest.get_data(as_text=True) or "{}")
        except RecursionError:
            raise ChatRefused.invalid(_too_deep()) from None
        except ValueError:
            raise ChatRefused.invalid(request.env._("The request body must be a JSON object.")) from None
        if not isinstance(body, dict):
            raise ChatRefused.invalid(request.env._("The request body must be a JSON object."))
        problem = _unstorable(body)
        if problem is not None:
            raise ChatRefused.invalid(problem)
        _check_record_ids(body)
        return body

    def _stream(self, turn):
        """The turn's events as SSE. Runs after the request's cursor is closed: the turn writes
        with cursors of its own. A client that goes away closes the events, which cancels the turn."""
        # Odoo hides the raw WSGI environ (and the socket it carries) behind the request wrapper;
        # its own websocket code reads it the same way. Absent (e.g. prefork), a closed connection
        # is found at the next write, heartbeats included.
        sock = getattr(request.httprequest, "_HTTPRequest__environ", {}).get("socket")

        def body():
            events = turn.events()
            last_write = time.monotonic()
            try:
                for item in events:
                    if item is None:
                        if _peer_gone(sock):
                            return
                        if time.monotonic() - last_write >= SSE_KEEPALIVE_SECONDS:
                            last_write = time.monotonic()
                            yield HEARTBEAT
                        continue
                    seq, event = item
                    yield encode_event(event.type, event.data(), seq)
                    last_write = time.monotonic()
            finally:
                events.close()

        return Response(body(), status=200, headers=SSE_HEADERS, content_type=SSE_CONTENT_TYPE, direct_passthrough=True)


def _check_record_ids(body):
    """Refuses (400, naming the field) a record id that is not a whole number: an object, an array
    or a string would otherwise fail deep in the models (a 500, which the widget takes for a full
    pool and sends again), or an empty one pass for "none"."""
    for name in RECORD_ID_FIELDS:
        try:
            _RECORD_ID.validate_python(body.get(name))
        except ValidationError:
            raise ChatRefused.invalid(_("%s must be a record id (a whole number).", name)) from None


def _too_deep():
    return _("The request is nested more than %s levels deep: it is not one the chat sends.", MAX_JSON_DEPTH)


def _unstorable(body):
    """What makes `body` unfit to store (a NUL character, half of a UTF-16 surrogate pair, JSON
    nested too deep), said for the user and naming the field; None when nothing does. Iterative:
    any depth is read."""
    stack = [(value, 2, name) for name, value in body.items()] + [(name, 1, name) for name in body]
    while stack:
        value, depth, name = stack.pop()
        if depth > MAX_JSON_DEPTH:
            return _too_deep()
        if isinstance(value, dict):
            stack += [(key, depth, name) for key in value]
            stack += [(item, depth + 1, name) for item in value.values()]
        elif isinstance(value, list):
            stack += [(item, depth + 1, name) for item in value]
        elif isinstance(value, str):
            if "\x00" in value:
                return _("%s holds a NUL character (U+0000), which cannot be stored: remove it.", name)
            if _LONE_SURROGATE.search(value):
                return _(
                    "%s holds half of a UTF-16 surrogate pair (a lone surrogate), which is not text: "
                    "remove it or paste it again.",
                    name,
                )
    return None


def _sequence(value):
    if value in (None, ""):
        return 0
    try:
        number = int(str(value).strip())
    except ValueError:
        raise ChatRefused.invalid(_("after / Last-Event-ID must be an event sequence number.")) from None
    if number < 0:
        raise ChatRefused.invalid(_("after / Last-Event-ID must be an event sequence number."))
    return number


def _peer_gone(sock):
    """Whether the client closed its end: the socket reads as end-of-file. A request's body was
    read before streaming, so anything readable now is the close (or data we may ignore)."""
    if sock is None:
        return False
    try:
        readable, _, _ = select.select([sock], [], [], 0)
        if not readable:
            return False
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except BlockingIOError:
        return False
    except (OSError, ValueError):
        return True
