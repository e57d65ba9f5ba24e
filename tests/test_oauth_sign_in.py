"""OAuth sign-in to an MCP server in a real Odoo, against a real OAuth-protected MCP server
(testing/oauth_server.py): the browser's side over real HTTP (Odoo's start route, the provider's
authorize and consent, Odoo's callback), three users, the chat pausing for a sign-in and resuming."""

import json
import logging
from urllib.parse import parse_qs, urlsplit

from odoo.exceptions import AccessError
from odoo.tests import new_test_user, tagged

from odoo.addons.ai_mcp.testing.oauth_server import STEP_UP_TOOL, OAuthServer
from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .chat_common import AI_USER_GROUPS, ChatCase, types_of

_logger = logging.getLogger(__name__)


@tagged("post_install", "-at_install")
class TestOAuthSignIn(ChatCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.oauth = OAuthServer(name="notes").start()
        cls.addClassCleanup(cls.oauth.stop)
        # the redirect URI Odoo registers is its own address, as the browser reaches it
        cls.env["ir.config_parameter"].sudo().set_param("web.base.url", cls.base_url())
        cls.manager = new_test_user(
            cls.env, "oauth_manager", groups=f"{AI_USER_GROUPS},ai_mcp.group_ai_manager", name="Notes Manager"
        )
        cls.notes = cls.env["mcp.server"].create(
            {
                "name": "Notes",
                "scope": "system",
                "url": cls.oauth.url,
                "auth_type": "oauth",
                "oauth_token_scope": "user",
            }
        )
        cls.assistant.mcp_server_ids = [(4, cls.notes.id)]
        cls.servers_closed_at_end = (cls.notes,)

    # -- the browser's side ----------------------------------------------------------------------

    def start_sign_in(self, user, **query):
        """Log in as `user` and open Odoo's sign-in link: the provider's authorize URL it redirects to."""
        session = self.login(user)
        params = "&".join(f"{k}={v}" for k, v in {"server_id": self.notes.id, **query}.items())
        response = self.opener.get(f"{self.base_url()}/ai_mcp/oauth/start?{params}", allow_redirects=False, timeout=30)
        self.assertEqual(response.status_code, 303, response.text)
        return session, response.headers["Location"]

    def sign_in(self, user, provider_user):
        session, authorize = self.start_sign_in(user)
        back = self.oauth.consent(authorize, user=provider_user)
        response = self.opener.get(back, timeout=30)
        self.assertEqual(response.status_code, 200, response.text)
        self.assertIn("You are signed in to Notes", response.text)
        return session

    def synced(self):
        """The manager signs in and syncs the tools, as an administrator does once."""
        self.sign_in(self.manager, "manager")
        result = self.notes.with_user(self.manager)._sync_tools()
        self.assertFalse(result.get("error"), result)
        self.assertEqual(self.notes.state, "connected")
        # what is tested here is the sign-in, not the approval a tool without annotations asks for
        self.notes.tool_ids.write({"requires_approval": False})

    def grants(self):
        self.env.invalidate_all()
        return self.env["mcp.oauth.token"].sudo().search([("server_id", "=", self.notes.id)])

    # -- tests -----------------------------------------------------------------------------------

    def test_sign_in_from_the_form_sync_and_sign_out(self):
        self.assertFalse(self.notes.with_user(self.manager).oauth_signed_in)
        _session, authorize = self.start_sign_in(self.manager)
        query = parse_qs(urlsplit(authorize).query)
        self.assertEqual(query["code_challenge_method"], ["S256"])
        self.assertEqual(query["resource"], [self.oauth.url])
        self.assertEqual(query["redirect_uri"], [f"{self.base_url()}/ai_mcp/oauth/callback"])
        self.assertTrue(self.env["mcp.oauth.pending"].sudo().search_count([("user_id", "=", self.manager.id)]))

        back = self.oauth.consent(authorize, user="manager")
        page = self.opener.get(back, timeout=30)
        self.assertEqual(page.status_code, 200)
        self.assertIn(
            "You can close this tab and reload the server",
            page.text,
            "signed in from the form: there is no conversation",
        )
        self.assertNotIn("conversation", page.text)
        self.assertFalse(self.env["mcp.oauth.pending"].sudo().search_count([]), "a sign-in is used once")
        grant = self.grants()
        self.assertEqual(
            (grant.user_id, grant.scope, grant.access_token_set, grant.refresh_token_set),
            (self.manager, "read", True, True),
        )

        form = self.notes.with_user(self.manager)
        form.invalidate_recordset()
        self.assertTrue(form.oauth_signed_in)
        self.assertIn("Notes Manager, until", form.oauth_status)
        self.assertEqual(form.oauth_granted_scopes, "read")
        self.assertFalse(self.notes.with_user(self.user).oauth_signed_in, "the sign-in is the manager's own")

        self.assertFalse(form._sync_tools().get("error"))
        self.assertEqual(set(self.notes.tool_ids.mapped("name")), {"whoami", "echo", "admin_report"})

        form.action_oauth_sign_out()
        self.assertFalse(self.grants())
        self.assertTrue(self.oauth.provider.revoked, "the grant is revoked at the provider, which offers revocation")
        form.invalidate_recordset()
        self.assertFalse(form.oauth_signed_in)

    def test_a_user_not_signed_in_is_asked_and_the_turn_resumes_as_that_user(self):
        self.synced()
        self.sign_in(self.user, "alice")  # user A

        # user B has not signed in: the turn pauses before the call, A's grant is not used
        self.login(self.other)
        self.llm.queue(Turn(text="Let me check. ", tool_calls=(ToolCall("whoami", {}, id="c1"),)))
        _response, events = self.send("Who am I on Notes?")
        transcript = [(e.event, e.data) for e in events]
        self.assertEqual(events[-1].event, "auth_required", transcript)
        self.assertNotIn("tool_result", types_of(events))
        pause = events[-1].data
        conversation_id = pause["conversation_id"] if "conversation_id" in pause else events[0].data["conversation_id"]
        self.assertEqual(
            [(s["server_id"], s["server"], s["step_up"]) for s in pause["servers"]], [(self.notes.id, "Notes", False)]
        )
        self.assertEqual(
            pause["servers"][0]["url"],
            f"/ai_mcp/oauth/start?server_id={self.notes.id}&conversation_id={conversation_id}",
        )
        self.assertEqual([c["id"] for c in pause["calls"]], ["c1"])
        conversation = self.conversation(conversation_id)
        self.assertEqual(conversation.state, "awaiting_auth")
        self.assertEqual(conversation.message_ids.filtered(lambda m: m.role == "tool").status, "pending")

        # B signs in (the link from the card, in B's browser session), and the turn goes on as B
        session, authorize = self.start_sign_in(self.other, conversation_id=conversation_id)
        response = self.opener.get(self.oauth.consent(authorize, user="bob"), timeout=30)
        self.assertEqual(response.status_code, 200, response.text)
        self.assertIn("the conversation goes on by itself", response.text)
        self.env.invalidate_all()
        bus = self.env["bus.bus"].sudo().search([("message", "like", "ai_mcp.oauth_signed_in")])
        self.assertIn(
            f'"res.partner",{self.other.partner_id.id}]',
            " ".join(bus.mapped("channel")),
            "the chat learns of the sign-in through the bus",
        )
        self.llm.queue(Turn(text="You are bob."))
        _response, resumed = self.resume(conversation_id, sign_in={"declined": []})
        transcript += [(e.event, e.data) for e in resumed]
        _logger.info(
            "OAuth pause and resume, events: %s",
            json.dumps(
                [
                    (
                        kind,
                        {
                            k: v
                            for k, v in data.items()
                            if k in ("type", "id", "name", "servers", "ok", "content", "delta")
                        },
                    )
                    for kind, data in transcript
                ],
                default=str,
            ),
        )
        results = [e.data for e in resumed if e.event == "tool_result"]
        self.assertEqual([(r["id"], r["ok"], r["content"][0]["text"]) for r in results], [("c1", True, "bob")])
        self.assertEqual(resumed[-1].event, "done")
        self.assertEqual(self.conversation(conversation_id).state, "idle")

        # A's turn uses A's grant, never B's
        self.login(self.user)
        self.llm.queue(Turn(tool_calls=(ToolCall("whoami", {}, id="a1"),)), Turn(text="You are alice."))
        _response, events = self.send("Who am I on Notes?")
        self.assertEqual([e.data["content"][0]["text"] for e in events if e.event == "tool_result"], ["alice"])
        self.assertEqual(set(self.grants().mapped("user_id.login")), {"oauth_manager", "chat_user", "chat_other"})

    def test_a_step_up_asks_for_the_granted_scope_and_the_challenged_one(self):
        # the server's challenge names only the scope the call lacks, not the one already granted
        self.patch(self.oauth.switches, "challenge_scope", "admin")
        self.synced()
        self.sign_in(self.user, "alice")
        self.assertEqual(self.grants().filtered(lambda g: g.user_id == self.user).scope, "read")

        self.llm.queue(Turn(tool_calls=(ToolCall(STEP_UP_TOOL, {}, id="s1"),)))
        _response, events = self.send("Give me the admin report")
        self.assertEqual(events[-1].event, "auth_required", [(e.event, e.data) for e in events])
        card = events[-1].data["servers"][0]
        self.assertTrue(card["step_up"])
        conversation_id = events[0].data["conversation_id"]

        # the card's link: the provider is asked for what was granted and what the call needs
        response = self.opener.get(f"{self.base_url()}{card['url']}", allow_redirects=False, timeout=30)
        self.assertEqual(response.status_code, 303, response.text)
        authorize = response.headers["Location"]
        self.assertEqual(parse_qs(urlsplit(authorize).query)["scope"], ["read admin"])
        back = self.oauth.consent(authorize, user="alice")
        self.assertEqual(self.opener.get(back, timeout=30).status_code, 200)
        self.assertEqual(self.grants().filtered(lambda g: g.user_id == self.user).scope, "read admin")

        # the call goes on, and so do the tools the first sign-in allowed: no sign-in asked again
        self.llm.queue(Turn(tool_calls=(ToolCall("whoami", {}, id="s2"),)), Turn(text="Here it is."))
        _response, resumed = self.resume(conversation_id, sign_in={"declined": []})
        results = [
            (e.data["id"], e.data["ok"], e.data["content"][0]["text"]) for e in resumed if e.event == "tool_result"
        ]
        self.assertEqual(results, [("s1", True, "report for alice with read admin"), ("s2", True, "alice")])
        self.assertEqual(resumed[-1].event, "done")

    def test_test_connection_refused_for_a_scope_the_grant_holds_does_not_ask_to_sign_in_again(self):
        # the manager signed in with every scope; the server still refuses its listing for "admin":
        # a new sign-in would bring the same grant and the same refusal, as a turn already knows
        self.notes.oauth_scopes = "read admin"
        self.sign_in(self.manager, "manager")
        self.assertEqual(self.grants().scope, "read admin")
        self.patch(self.oauth.switches, "challenge_scope", "admin")
        self.patch(self.oauth.switches, "refused_methods", {"tools/list": 403})

        shown = self.notes.with_user(self.manager).action_test_connection()

        self.assertEqual(shown["params"]["type"], "danger")
        self.assertIn("holds the permissions it asks for (admin)", shown["params"]["message"])
        self.assertNotIn("Sign in", shown["params"]["message"])
        self.assertEqual(self.notes.last_error_code, "MCP_AUTH_FAILED")

    def test_declining_answers_without_the_server_and_says_why(self):
        self.synced()
        self.login(self.other)
        self.llm.queue(Turn(tool_calls=(ToolCall("whoami", {}, id="c1"),)))
        _response, events = self.send("Echo hi on Notes")
        self.assertEqual(events[-1].event, "auth_required")
        conversation_id = events[0].data["conversation_id"]

        self.llm.queue(Turn(text="I answer without Notes."))
        _response, resumed = self.resume(conversation_id, sign_in={"declined": [self.notes.id]})
        result = next(e.data for e in resumed if e.event == "tool_result")
        self.assertEqual(result["error_code"], "MCP_AUTH_REQUIRED")
        self.assertIn("chose not to sign in to Notes", result["error_message"])
        self.assertEqual(resumed[-1].event, "done")
        told = [m["content"] for m in self.llm.requests[-1]["messages"] if m["role"] == "tool"]
        self.assertIn("chose not to sign in to Notes", told[0])

        response, _events = self.resume(conversation_id, sign_in={"declined": "all"})
        self.assertEqual(response.status_code, 409, "the conversation no longer waits")

    def test_a_shared_grant_serves_every_user_and_only_its_manager_signs_in(self):
        self.notes.oauth_token_scope = "shared"
        self.synced()
        grant = self.grants()
        self.assertEqual((len(grant), grant.user_id.id, grant.signed_in_by_id), (1, False, self.manager))

        self.login(self.other)
        refused = self.opener.get(
            f"{self.base_url()}/ai_mcp/oauth/start?server_id={self.notes.id}", allow_redirects=False, timeout=30
        )
        self.assertEqual(refused.status_code, 403)
        self.assertIn("Only the manager of Notes may sign in for everyone who uses it.", refused.text)

        self.llm.queue(Turn(tool_calls=(ToolCall("whoami", {}, id="s1"),)), Turn(text="You use the shared sign-in."))
        _response, events = self.send("Who am I on Notes?")
        self.assertNotIn("auth_required", types_of(events))
        self.assertEqual([e.data["content"][0]["text"] for e in events if e.event == "tool_result"], ["manager"])

    def test_prompts_and_resources_are_read_with_the_users_own_grant(self):
        self.synced()
        Conversation = self.env["ai.conversation"]
        mine = Conversation.with_user(self.manager)._chat_prompts(self.assistant.id)
        self.assertEqual([p["name"] for p in mine["prompts"]], ["my_notes"], mine["warnings"])
        text = Conversation.with_user(self.manager)._chat_prompt_text(self.assistant.id, self.notes.id, "my_notes")
        self.assertIn("Summarize the notes of manager.", text)
        read = Conversation.with_user(self.manager)._chat_read_resource(
            self.assistant.id, self.notes.id, uri="notes://mine"
        )
        self.assertEqual(read["contents"][0]["text"], "notes of manager")

        # a user who has not signed in is told so, and never reads with the manager's grant
        theirs = Conversation.with_user(self.user)._chat_prompts(self.assistant.id)
        self.assertFalse(theirs["prompts"])
        self.assertTrue(
            any("Notes" in warning and "MCP_AUTH_REQUIRED" in warning for warning in theirs["warnings"]), theirs
        )
        self.sign_in(self.user, "bob")
        read = Conversation.with_user(self.user)._chat_read_resource(
            self.assistant.id, self.notes.id, uri="notes://mine"
        )
        self.assertEqual(read["contents"][0]["text"], "notes of bob")

    def test_a_registration_stored_before_mcp_2_is_kept(self):
        """mcp 1.x wrote a root issuer with its slash, and stored registrations so; mcp 2.x reads the
        provider's metadata as written, without it. The stored registration is still Odoo's client
        there: signing in does not register Odoo again, with every upgraded database."""
        bare = OAuthServer(name="bare", issuer_slash=False).start()
        self.addCleanup(bare.stop)
        server = self.env["mcp.server"].create(
            {"name": "Bare", "scope": "system", "url": bare.url, "auth_type": "oauth", "oauth_token_scope": "shared"}
        )
        self.login(self.manager)

        def start():
            response = self.opener.get(
                f"{self.base_url()}/ai_mcp/oauth/start?server_id={server.id}", allow_redirects=False, timeout=30
            )
            self.assertEqual(response.status_code, 303, response.text)
            return parse_qs(urlsplit(response.headers["Location"]).query)["client_id"][0]

        def stored_issuer(issuer):
            data = json.loads(server.sudo()._secret_value("oauth_registration"))
            data["client"]["issuer"] = issuer
            server.sudo().oauth_registration = json.dumps(data)

        client_id = start()
        self.assertEqual(list(bare.provider.clients), [client_id])
        data = json.loads(server.sudo()._secret_value("oauth_registration"))
        self.assertEqual(data["client"]["issuer"], bare.base_url)

        stored_issuer(f"{bare.base_url}/")  # as mcp 1.x stored it
        self.assertEqual(start(), client_id)
        self.assertEqual(len(bare.provider.clients), 1, "not registered again")

        stored_issuer("http://127.0.0.1:1/")  # another authorization server's registration is not used
        self.assertNotEqual(start(), client_id)
        self.assertEqual(len(bare.provider.clients), 2)

    def test_odoo_serves_its_client_metadata_document(self):
        url = f"{self.base_url()}/ai_mcp/oauth/client-metadata.json"
        document = self.opener.get(url, timeout=30).json()
        self.assertEqual(document["client_id"], url)
        self.assertEqual(document["redirect_uris"], [f"{self.base_url()}/ai_mcp/oauth/callback"])
        self.assertEqual(
            (document["token_endpoint_auth_method"], document["grant_types"]),
            ("none", ["authorization_code", "refresh_token"]),
        )

    def test_nobody_reads_a_grant_managers_included(self):
        self.synced()
        self.sign_in(self.user, "alice")
        for user in (self.manager, self.env.ref("base.user_admin"), self.user):
            with self.assertRaises(AccessError, msg=user.login):
                self.env["mcp.oauth.token"].with_user(user).search([])
            with self.assertRaises(AccessError, msg=user.login):
                self.env["mcp.oauth.pending"].with_user(user).search([])
        # the server's registration and client secret are write-only like its other secrets
        values = self.notes.with_user(self.manager).read(
            ["oauth_registration", "oauth_client_secret", "oauth_registration_set"]
        )[0]
        self.assertEqual(
            (values["oauth_registration"], values["oauth_client_secret"], values["oauth_registration_set"]),
            (False, False, True),
        )
        self.login(self.manager)
        answer = self.jsonrpc(
            "/web/dataset/call_kw",
            {
                "model": "mcp.oauth.token",
                "method": "search_read",
                "args": [[]],
                "kwargs": {"fields": ["access_token", "refresh_token"]},
            },
        )
        self.assertIn("error", answer)
        grant = self.grants().filtered(lambda g: g.user_id == self.user)
        self.assertNotIn(grant._secret_value("access_token"), json.dumps(answer))

    def test_the_callback_refuses_a_state_of_another_user_or_used_twice(self):
        self.synced()
        _session, authorize = self.start_sign_in(self.user)
        back = self.oauth.consent(authorize, user="alice")

        self.login(self.other)  # B opens A's callback (a link sent to B, or a forged one)
        response = self.opener.get(back, timeout=30)
        self.assertEqual(response.status_code, 400)
        self.assertIn("started by another user or in another browser session", response.text)
        self.assertFalse(self.grants().filtered(lambda g: g.user_id in (self.user | self.other)))

        self.login(self.user)  # A again, but in another browser session than the one that started it
        self.assertEqual(self.opener.get(back, timeout=30).status_code, 400, "a state is bound to its browser session")

        self.sign_in(self.user, "alice")  # started and finished in the same session
        self.assertEqual(self.grants().filtered(lambda g: g.user_id == self.user).scope, "read")
        back = self.opener.get(
            f"{self.base_url()}/ai_mcp/oauth/start?server_id={self.notes.id}", allow_redirects=False, timeout=30
        )
        back = self.oauth.consent(back.headers["Location"], user="alice")
        self.assertEqual(self.opener.get(back, timeout=30).status_code, 200)
        again = self.opener.get(back, timeout=30)
        self.assertEqual(again.status_code, 400)
        self.assertIn("unknown, already used, expired or belongs to someone else", again.text)

    def test_a_server_without_oauth_metadata_says_so_naming_the_field(self):
        plain = self.env["mcp.server"].create(
            {"name": "Plain", "scope": "system", "url": self.mcp.url, "auth_type": "oauth"}
        )
        self.assistant.mcp_server_ids = [(4, plain.id)]
        self.login(self.manager)
        response = self.opener.get(
            f"{self.base_url()}/ai_mcp/oauth/start?server_id={plain.id}", allow_redirects=False, timeout=30
        )
        self.assertEqual(response.status_code, 502)
        self.assertIn("field: authorization_servers", response.text)
        # the form's button says it where the admin clicked, and opens no tab
        action = plain.with_user(self.manager).action_oauth_sign_in()
        self.assertEqual((action["tag"], action["params"]["type"]), ("display_notification", "danger"))
        self.assertIn("field: authorization_servers", action["params"]["message"])
        self.assertFalse(self.env["mcp.oauth.pending"].sudo().search_count([]), "nothing was started")
        # a server whose metadata is found opens the sign-in tab
        self.assertEqual(
            self.notes.with_user(self.manager).action_oauth_sign_in()["url"],
            f"/ai_mcp/oauth/start?server_id={self.notes.id}",
        )

    def test_discuss_replies_with_the_sign_in_link(self):
        self.synced()
        channel = self.assistant.with_user(self.other)._discuss_chat()
        self.llm.queue(Turn(tool_calls=(ToolCall("whoami", {}, id="d1"),)))
        channel.with_user(self.other).message_post(
            body="Who am I on Notes?", message_type="comment", subtype_xmlid="mail.mt_comment"
        )
        self.env.flush_all()  # the turn reads on a cursor of its own, as after a commit
        self.env.cr.postcommit.run()
        self.env.invalidate_all()
        reply = self.env["mail.message"].search(
            [
                ("model", "=", "discuss.channel"),
                ("res_id", "=", channel.id),
                ("author_id", "=", self.assistant.partner_id.id),
            ],
            order="id desc",
            limit=1,
        )
        body = str(reply.body)
        conversation = self.env["ai.conversation"].search([("channel_id", "=", channel.id)])
        self.assertIn("Sign in to Notes", body, [(e.type, e.payload) for e in self.stored_events(conversation.id)])
        self.assertIn(f"{self.base_url()}/ai_mcp/oauth/start?server_id={self.notes.id}", body)

        # "no" goes on without the server; the model reads why
        self.llm.queue(Turn(text="Without Notes, I cannot tell."))
        channel.with_user(self.other).message_post(body="no", message_type="comment", subtype_xmlid="mail.mt_comment")
        self.env.cr.postcommit.run()
        self.env.invalidate_all()
        told = [m["content"] for m in self.llm.requests[-1]["messages"] if m["role"] == "tool"]
        self.assertIn("chose not to sign in to Notes", told[0])

    def test_the_sign_in_card_signs_in_and_the_answer_goes_on(self):
        self.synced()
        self.oauth.switches.auto_consent_user = "bob"  # the provider's Allow, pressed in the browser's own flow
        self.addCleanup(setattr, self.oauth.switches, "auto_consent_user", None)
        self.llm._responder = notes_model
        self.addCleanup(setattr, self.llm, "_responder", None)
        self.start_tour("/odoo/action-ai_mcp.action_ai_chat", "ai_mcp_oauth_tour", login=self.other.login, timeout=120)
        grant = self.grants().filtered(lambda g: g.user_id == self.other)
        self.assertEqual((grant.scope, grant.signed_in_by_id), ("read", self.other))
        calls = self.env["ai.message"].search(
            [("role", "=", "tool"), ("conversation_id.user_id", "=", self.other.id)], order="id"
        )
        self.assertEqual([(c.tool_name, c.status) for c in calls], [("whoami", "done"), (STEP_UP_TOOL, "error")])
        self.assertEqual(calls[1].error_code, "MCP_AUTH_REQUIRED")


def notes_model(body):
    """ "Who am I on Notes?": whoami, then its answer; "Show the admin report": admin_report, then an
    answer without it."""
    messages = body.get("messages", [])
    last_user = max(index for index, message in enumerate(messages) if message.get("role") == "user")
    results = [m["content"] for m in messages[last_user:] if m.get("role") == "tool"]
    if messages[last_user]["content"].startswith("Who am I"):
        return Turn(text=f"You are {results[0]}.") if results else Turn(tool_calls=(ToolCall("whoami", {}),))
    return Turn(text="I answer without Notes.") if results else Turn(tool_calls=(ToolCall(STEP_UP_TOOL, {}),))
