"""Companies as a boundary: in a database with two companies, each company's AI users and managers
see, use and link only their company's providers, assistants, servers, cloud services, presets and
conversations, plus the shared ones (no company); a user allowed both sees the company switched to."""

import json

from odoo.exceptions import AccessError, UserError
from odoo.tests import TransactionCase, new_test_user, tagged

from odoo.addons.ai_mcp.exceptions import ChatRefused
from odoo.addons.ai_mcp.models.server.oauth import CALLBACK_PATH
from odoo.addons.ai_mcp.services.errors import ErrorCode
from odoo.addons.ai_mcp.testing.scripted_llm import Turn, openai_usage

from .chat_common import ChatCase, text_of
from .common import DEAD_SYSTEM_URL, PUBLIC_URL

USER_GROUPS = "base.group_user,ai_mcp.group_ai_user"
MANAGER_GROUPS = f"{USER_GROUPS},ai_mcp.group_ai_manager"


def company_user(env, login, company, groups, companies=None):
    """An internal user working in `company` (and allowed `companies`, default: that one only)."""
    companies = companies or company
    return new_test_user(
        env, login, groups=groups, name=login, company_id=company.id, company_ids=[(6, 0, companies.ids)]
    )


class CompaniesMixin:
    """Two companies, each with an AI user and an AI manager, and a user allowed both."""

    @classmethod
    def make_companies(cls):
        cls.company_a = cls.env["res.company"].create({"name": "Company A"})
        cls.company_b = cls.env["res.company"].create({"name": "Company B"})
        cls.user_a = company_user(cls.env, "user_a", cls.company_a, USER_GROUPS)
        cls.manager_a = company_user(cls.env, "manager_a", cls.company_a, MANAGER_GROUPS)
        cls.user_b = company_user(cls.env, "user_b", cls.company_b, USER_GROUPS)
        cls.manager_b = company_user(cls.env, "manager_b", cls.company_b, MANAGER_GROUPS)
        cls.both = company_user(cls.env, "user_ab", cls.company_a, USER_GROUPS, cls.company_a | cls.company_b)


@tagged("post_install", "-at_install")
class TestCompanies(CompaniesMixin, TransactionCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env = cls.env(context=dict(cls.env.context, tracking_disable=True, mail_notrack=True))
        cls.env["ir.config_parameter"].sudo().set_param("ai_mcp.allowed_hosts", False)
        cls.make_companies()
        # what the module makes at install (the shared This Odoo server and its tools) is not this
        # test's: each company sees it, as any shared record, and the test counts only its own
        cls.installed = {
            model: cls.env[model].sudo().with_context(active_test=False).search([]).ids
            for model in ("ai.provider", "mcp.server", "mcp.tool", "ai.assistant", "ai.tool.preset")
        }
        cls.records = {}
        for key, company in (("a", cls.company_a), ("b", cls.company_b), ("shared", cls.env["res.company"])):
            provider = cls.env["ai.provider"].create(
                {"name": f"Provider {key}", "company_id": company.id, "default_model": "m"}
            )
            server = cls.env["mcp.server"].create(
                {"name": f"Server {key}", "scope": "system", "url": DEAD_SYSTEM_URL, "company_id": company.id}
            )
            tool = cls.env["mcp.tool"].create(
                {
                    "name": f"tool_{key}",
                    "server_id": server.id,
                    "content_hash": "h",
                    "approved_hash": "h",
                    "input_schema": '{"type": "object", "properties": {"limit": {"type": "integer"}}}',
                }
            )
            assistant = cls.env["ai.assistant"].create(
                {
                    "name": f"Assistant {key}",
                    "company_id": company.id,
                    "provider_id": provider.id,
                    "mcp_server_ids": [(6, 0, server.ids)],
                }
            )
            preset = cls.env["ai.tool.preset"].create(
                {"assistant_id": assistant.id, "tool_id": tool.id, "arguments": '{"limit": 1}'}
            )
            cls.records[key] = {
                "ai.provider": provider,
                "mcp.server": server,
                "mcp.tool": tool,
                "ai.assistant": assistant,
                "ai.tool.preset": preset,
            }

    def names_seen(self, user, model, **context):
        records = (
            self.env[model]
            .with_user(user)
            .with_context(**context)
            .search([("id", "not in", self.installed.get(model, []))])
        )
        return set(records.mapped("display_name"))

    def expected(self, model, *keys):
        return {self.records[key][model].display_name for key in keys}

    def test_each_company_sees_its_records_and_the_shared_ones(self):
        for user, key in ((self.manager_a, "a"), (self.manager_b, "b")):
            for model in ("ai.provider", "mcp.server", "mcp.tool", "ai.assistant", "ai.tool.preset"):
                with self.subTest(user=user.login, model=model):
                    self.assertEqual(self.names_seen(user, model), self.expected(model, key, "shared"))
        for user, key in ((self.user_a, "a"), (self.user_b, "b")):
            with self.subTest(user=user.login):
                self.assertEqual(self.names_seen(user, "ai.assistant"), self.expected("ai.assistant", key, "shared"))

    def test_another_companys_records_cannot_be_read_or_changed_by_id(self):
        changes = {
            "ai.provider": {"name": "Taken"},
            "mcp.server": {"name": "Taken"},
            "mcp.tool": {"enabled": False},
            "ai.assistant": {"name": "Taken"},
            "ai.tool.preset": {"arguments": '{"limit": 2}'},
        }
        for model, values in changes.items():
            theirs = self.records["a"][model]
            with self.subTest(model=model):
                with self.assertRaises(AccessError):
                    theirs.with_user(self.manager_b).read(list(values))
                with self.assertRaises(AccessError):
                    theirs.with_user(self.manager_b).write(values)
                theirs.invalidate_recordset()
                self.assertNotEqual({k: theirs[k] for k in values}, values)
        with self.assertRaises(AccessError):
            self.records["a"]["ai.assistant"].with_user(self.user_b).read(["name"])
        self.assertEqual(
            self.records["a"]["ai.assistant"].with_user(self.user_a).read(["name"])[0]["name"], "Assistant a"
        )

    def test_shared_records_are_seen_by_both_companies(self):
        shared = self.records["shared"]["ai.assistant"]
        for user in (self.user_a, self.user_b, self.manager_a, self.manager_b):
            with self.subTest(user=user.login):
                self.assertEqual(shared.with_user(user).read(["name"])[0]["name"], "Assistant shared")
                self.assertTrue(shared._user_may_use(user))

    def test_records_cannot_be_linked_across_companies(self):
        a, b, shared = self.records["a"], self.records["b"], self.records["shared"]
        Assistant = self.env["ai.assistant"].with_user(self.manager_b)
        with self.assertRaisesRegex(UserError, r"provider_id"), self.env.cr.savepoint():
            Assistant.create({"name": "Mixed", "provider_id": a["ai.provider"].id})
        with self.assertRaisesRegex(UserError, r"mcp_server_ids"), self.env.cr.savepoint():
            b["ai.assistant"].write({"mcp_server_ids": [(4, a["mcp.server"].id)]})
        # a shared assistant is everyone's: it cannot use one company's provider or servers
        with self.assertRaisesRegex(UserError, r"mcp_server_ids"), self.env.cr.savepoint():
            shared["ai.assistant"].write({"mcp_server_ids": [(4, a["mcp.server"].id)]})
        with self.assertRaisesRegex(UserError, r"provider_id"), self.env.cr.savepoint():
            shared["ai.assistant"].write({"provider_id": b["ai.provider"].id})
        self.assertEqual(shared["ai.assistant"].provider_id, shared["ai.provider"])
        self.assertEqual(shared["ai.assistant"].mcp_server_ids, shared["mcp.server"])
        # a company's assistant may use shared ones
        b["ai.assistant"].write({"provider_id": shared["ai.provider"].id})
        self.assertEqual(b["ai.assistant"].provider_id, shared["ai.provider"])

    def test_new_records_belong_to_the_company_worked_in(self):
        provider = self.env["ai.provider"].with_user(self.manager_b).create({"name": "New", "default_model": "m"})
        self.assertEqual(provider.company_id, self.company_b)
        switched = self.env["ai.provider"].with_user(self.both).with_context(allowed_company_ids=[self.company_b.id])
        self.assertEqual(switched.sudo().create({"name": "Switched", "default_model": "m"}).company_id, self.company_b)

    def test_user_servers_follow_their_cloud_service(self):
        service = self.env["cloud.service"].with_user(self.user_a).create({"name": "A's shop"})
        self.assertEqual(service.company_id, self.company_a)
        server = (
            self.env["mcp.server"]
            .with_user(self.user_a)
            .create({"name": "Shop", "scope": "user", "cloud_service_id": service.id, "url": PUBLIC_URL})
        )
        self.assertEqual(server.company_id, self.company_a)
        tool = self.env["mcp.tool"].create({"name": "t", "server_id": server.id, "content_hash": "h"})
        self.assertEqual(tool.company_id, self.company_a)
        with self.assertRaisesRegex(UserError, r"cloud_service_id"):
            self.env["mcp.server"].create(
                {
                    "name": "Elsewhere",
                    "scope": "user",
                    "cloud_service_id": service.id,
                    "url": PUBLIC_URL,
                    "company_id": self.company_b.id,
                }
            )
        # a member working in another company neither sees nor chats with the service's tools
        service.write({"member_ids": [(4, self.user_b.id)]})
        self.assertFalse(service._user_may_use(self.user_b))
        self.assertTrue(service._user_may_use(self.user_a))
        with self.assertRaises(AccessError):
            service.with_user(self.user_b).read(["name"])
        # its owner cannot hand it to a company they do not work in; moved there, it takes its servers
        with self.assertRaises(AccessError):
            service.write({"company_id": self.company_b.id})
        service.sudo().write({"company_id": self.company_b.id})
        self.assertEqual((server.company_id, tool.company_id), (self.company_b, self.company_b))

    def test_a_user_of_both_companies_sees_the_one_switched_to(self):
        self.assertEqual(
            self.names_seen(self.both, "ai.assistant", allowed_company_ids=[self.company_b.id]),
            self.expected("ai.assistant", "b", "shared"),
        )
        self.assertEqual(
            self.names_seen(self.both, "ai.assistant", allowed_company_ids=[self.company_a.id]),
            self.expected("ai.assistant", "a", "shared"),
        )
        in_b = self.env(user=self.both, context={"allowed_company_ids": [self.company_b.id]})
        self.assertEqual(
            [a["name"] for a in in_b["ai.conversation"]._chat_assistant_list()], ["Assistant b", "Assistant shared"]
        )

    def test_only_an_assistant_usable_in_its_company_asks_to_switch_to_it(self):
        assistant_a = self.records["a"]["ai.assistant"]
        in_b = self.env(user=self.both, context={"allowed_company_ids": [self.company_b.id]})["ai.conversation"]
        with self.assertRaises(ChatRefused) as refused:
            in_b._usable_assistant(assistant_a.id)
        self.assertEqual(
            refused.exception.message, "Assistant a belongs to Company A: switch to Company A to chat with it."
        )
        # not theirs in company A either: the same answer as for a missing assistant
        assistant_a.group_ids = self.env.ref("base.group_system")
        with self.assertRaises(ChatRefused) as refused:
            in_b._usable_assistant(assistant_a.id)
        self.assertEqual(refused.exception.code, ErrorCode.NOT_FOUND)

    def test_tool_calls_follow_their_conversation(self):
        Call = self.env["ai.tool.call"]
        conversation_a = self.env["ai.conversation"].create(
            {
                "assistant_id": self.records["a"]["ai.assistant"].id,
                "user_id": self.user_a.id,
                "company_id": self.company_a.id,
            }
        )
        in_a = Call.create({"tool_name": "in_a", "status": "ok", "conversation_id": conversation_a.id})
        # a call made outside any conversation (a manager trying a tool) follows its server
        tried_a = Call.create({"tool_name": "tried", "status": "ok", "server_id": self.records["a"]["mcp.server"].id})
        tried_shared = Call.create(
            {"tool_name": "tried", "status": "ok", "server_id": self.records["shared"]["mcp.server"].id}
        )
        self.assertEqual(Call.with_user(self.manager_a).search([]), in_a | tried_a | tried_shared)
        self.assertEqual(Call.with_user(self.manager_b).search([]), tried_shared)
        with self.assertRaises(AccessError):
            in_a.with_user(self.manager_b).read(["tool_name"])

    def test_a_server_another_companys_assistant_uses_cannot_move(self):
        a, shared = self.records["a"], self.records["shared"]
        server = shared["mcp.server"]
        a["ai.assistant"].write({"mcp_server_ids": [(4, server.id)]})
        # taken into company B, it would drop from A's assistant, and the shared one would hand it to A's users
        with self.assertRaises(UserError) as refused, self.env.cr.savepoint():
            server.with_user(self.manager_b).write({"company_id": self.company_b.id})
        self.assertEqual(
            refused.exception.args[0],
            "Server shared cannot belong to Company B while assistants of another company, or shared ones, use it: "
            "Assistant a (Company A), Assistant shared (every company). Take the server out of them first, or leave "
            "it shared.",
        )
        server.invalidate_recordset()
        self.assertFalse(server.company_id)
        # an archived assistant counts: it would use the server again once restored
        shared["ai.assistant"].write({"mcp_server_ids": [(3, server.id)]})
        a["ai.assistant"].active = False
        with self.assertRaisesRegex(UserError, r"use it: Assistant a \(Company A\)\. Take"), self.env.cr.savepoint():
            server.write({"company_id": self.company_b.id})
        # used by A's assistants only, it may become A's; and any server may become shared
        server.with_user(self.manager_a).write({"company_id": self.company_a.id})
        self.assertEqual(server.tool_ids.company_id, self.company_a)
        self.records["b"]["mcp.server"].with_user(self.manager_b).write({"company_id": False})

    def test_a_provider_another_companys_assistant_uses_cannot_move(self):
        a, b, shared = self.records["a"], self.records["b"], self.records["shared"]
        with self.assertRaises(UserError) as refused, self.env.cr.savepoint():
            shared["ai.provider"].with_user(self.manager_a).write({"company_id": self.company_a.id})
        self.assertEqual(
            refused.exception.args[0],
            "Provider shared cannot belong to Company A while assistants of another company, or shared ones, use it: "
            "Assistant shared (every company). Choose another provider for them first, or leave it shared.",
        )
        with self.assertRaisesRegex(UserError, r"use it: Assistant b \(Company B\)\. Choose"), self.env.cr.savepoint():
            b["ai.provider"].write({"company_id": self.company_a.id})
        shared["ai.provider"].invalidate_recordset()
        self.assertFalse(shared["ai.provider"].company_id)
        self.assertEqual(b["ai.provider"].company_id, self.company_b)
        a["ai.provider"].with_user(self.manager_a).write({"company_id": False})
        a["ai.provider"].with_user(self.manager_a).write({"company_id": self.company_a.id})

    def test_another_companys_server_gives_no_sign_in_and_lends_no_grant(self):
        server = self.records["a"]["mcp.server"]
        server.write({"auth_type": "oauth", "oauth_token_scope": "shared"})
        registration = {
            "client": {
                "kind": "manual",
                "issuer": "https://93.184.216.34",
                "client_id": "odoo",
                "redirect_uri": server._oauth_url(CALLBACK_PATH),
            },
            "token_endpoint": "https://93.184.216.34/token",
            "resource": DEAD_SYSTEM_URL,
        }
        server.sudo().write({"oauth_registration": json.dumps(registration)})
        self.assertIsNotNone(server._oauth_grant(self.user_a))
        self.assertIsNone(server._oauth_grant(self.user_b), "company B's user is never lent A's shared grant")
        server.with_user(self.manager_a)._oauth_check_may_sign_in()
        with self.assertRaisesRegex(AccessError, "You may not use Server a"):
            server.with_user(self.manager_b)._oauth_check_may_sign_in()


@tagged("post_install", "-at_install")
class TestCompanyChat(CompaniesMixin, ChatCase):
    """The real chat path: the scripted LLM, a real MCP server, the SSE routes."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.make_companies()
        # the shared assistant, with its shared provider and server
        cls.provider.company_id = False
        cls.server.company_id = False
        cls.assistant.company_id = False
        cls.assistant_a = cls.assistant.copy({"name": "Helper A", "company_id": cls.company_a.id})
        cls.assistant_b = cls.assistant.copy({"name": "Helper B", "company_id": cls.company_b.id})

    def chat(self, assistant, cids=None):
        if cids is not None:
            self.opener.cookies.set("cids", "-".join(str(c.id) for c in cids))
        self.llm.queue(Turn(text="Hello."))
        return self.send("Hi", assistant_id=assistant.id)

    def test_each_company_chats_with_its_assistant_and_its_conversation_carries_the_company(self):
        for user, assistant, company in (
            (self.user_a, self.assistant_a, self.company_a),
            (self.user_b, self.assistant_b, self.company_b),
        ):
            with self.subTest(user=user.login):
                self.login(user)
                response, events = self.chat(assistant)
                self.assertEqual(response.status_code, 200, response.text)
                self.assertEqual(text_of(events), "Hello.")
                conversation = self.conversation(events[0].data["conversation_id"])
                self.assertEqual(conversation.company_id, company)
                self.assertEqual(conversation.with_user(user).read(["name"])[0]["name"], "Hi")
        # each company's AI manager reads its company's conversations, their messages and events, only
        for manager, company in ((self.manager_a, self.company_a), (self.manager_b, self.company_b)):
            with self.subTest(manager=manager.login):
                for model in ("ai.conversation", "ai.message", "ai.conversation.event"):
                    seen = self.env[model].with_user(manager).search([])
                    self.assertTrue(seen)
                    owners = seen.mapped("company_id" if model == "ai.conversation" else "conversation_id.company_id")
                    self.assertEqual(owners, company, model)
        # each is billed to its own company: the usage rows of its model calls, which its managers report on
        for user, manager, company in (
            (self.user_a, self.manager_a, self.company_a),
            (self.user_b, self.manager_b, self.company_b),
        ):
            with self.subTest(billed=user.login):
                usage = self.env["ai.usage"].search([("user_id", "=", user.id)])
                self.assertTrue(usage)
                self.assertEqual(usage.company_id, company)
                self.assertEqual(self.env["ai.usage"].with_user(manager).search([]).company_id, company)

    def test_another_companys_assistant_is_refused(self):
        self.login(self.user_b)
        response, events = self.chat(self.assistant_a)
        self.assertEqual(response.status_code, 404, response.text)
        self.assertFalse(events)
        self.assertEqual(response.json()["error"]["code"], "NOT_FOUND")
        self.assertFalse(self.env["ai.conversation"].search([("user_id", "=", self.user_b.id)]))
        names = [a["name"] for a in self.jsonrpc("/ai_mcp/assistants")["result"]]
        self.assertEqual(names, ["Helper", "Helper B"])

    def test_a_cookie_naming_another_company_opens_nothing(self):
        self.login(self.user_b)
        response, events = self.chat(self.assistant_a, cids=self.company_a)
        self.assertEqual(response.status_code, 404, response.text)
        self.assertFalse(events)
        response, events = self.chat(self.assistant_b, cids=self.company_a | self.company_b)
        self.assertEqual(response.status_code, 200, response.text)
        self.assertEqual(self.conversation(events[0].data["conversation_id"]).company_id, self.company_b)

    def test_a_user_of_both_chats_in_the_company_switched_to(self):
        self.login(self.both)
        response, events = self.chat(self.assistant_b, cids=self.company_b)
        self.assertEqual(response.status_code, 200, response.text)
        self.assertEqual(self.conversation(events[0].data["conversation_id"]).company_id, self.company_b)
        names = [a["name"] for a in self.jsonrpc("/ai_mcp/assistants")["result"]]
        self.assertEqual(names, ["Helper", "Helper B"])
        # the shared assistant's conversation is the company's chatted in
        response, events = self.chat(self.assistant, cids=self.company_b)
        self.assertEqual(self.conversation(events[0].data["conversation_id"]).company_id, self.company_b)
        # A's assistant, while working in B: refused with a sentence saying why
        response, events = self.chat(self.assistant_a, cids=self.company_b)
        self.assertEqual(response.status_code, 400, response.text)
        self.assertEqual(
            response.json()["error"]["message"],
            "Helper A belongs to Company A: switch to Company A to chat with it.",
        )
        # the conversations of B are not listed while working in A, nor opened
        conversation_b = self.env["ai.conversation"].search(
            [("user_id", "=", self.both.id), ("assistant_id", "=", self.assistant_b.id)]
        )
        self.opener.cookies.set("cids", str(self.company_a.id))
        listed = self.jsonrpc("/ai_mcp/conversations")["result"]
        self.assertNotIn(conversation_b.id, [c["id"] for c in listed])
        response, _events = self.replay(conversation_b.id)
        self.assertEqual(response.status_code, 404)

    def offered_tools(self):
        return {tool["function"]["name"] for tool in self.llm.requests[-1].get("tools", [])}

    def test_a_turn_uses_no_provider_of_another_company(self):
        # as 1.9.0 let it be: the shared assistant's provider taken into company A
        self.env.cr.execute(
            "UPDATE ai_provider SET company_id = %s WHERE id = %s", (self.company_a.id, self.provider.id)
        )
        self.env.invalidate_all()
        self.login(self.user_b)
        response, events = self.chat(self.assistant)
        self.assertEqual(response.status_code, 200, response.text)
        self.assertEqual(events[-1].event, "error")
        self.assertEqual(events[-1].data["code"], "CONFIG_INVALID")
        self.assertIn(
            "Helper cannot answer in Company B: its provider Scripted belongs to another company.",
            events[-1].data["message"],
        )
        self.assertFalse(self.llm.requests, "nothing is sent through A's provider for B's user")
        self.assertFalse(self.env["ai.usage"].search([("user_id", "=", self.user_b.id)]))
        self.login(self.user_a)
        _response, events = self.chat(self.assistant)
        self.assertEqual(text_of(events), "Hello.")

    def test_a_turn_uses_no_server_of_another_company(self):
        server_b = self.env["mcp.server"].create(
            {"name": "B tools", "scope": "system", "url": self.mcp.url, "company_id": self.company_b.id}
        )
        server_b.with_context(ai_mcp_keep_state=True).write({"state": "connected"})
        self.env["mcp.tool"].create(
            {"name": "b_only", "server_id": server_b.id, "content_hash": "h", "approved_hash": "h"}
        )
        # as 1.9.0 let it be: A's assistant's server taken into company B
        self.env.cr.execute(
            "INSERT INTO ai_assistant_mcp_server_rel (assistant_id, server_id) VALUES (%s, %s)",
            (self.assistant_a.id, server_b.id),
        )
        self.env.invalidate_all()
        self.login(self.both)
        response, events = self.chat(self.assistant_a, cids=self.company_a | self.company_b)
        self.assertEqual(text_of(events), "Hello.", response.text)
        self.assertEqual(self.conversation(events[0].data["conversation_id"]).company_id, self.company_a)
        self.assertIn("add", self.offered_tools())
        self.assertNotIn("b_only", self.offered_tools(), "B's server is not used in A's conversation")

    def test_another_companys_cloud_service_is_refused_saying_to_switch(self):
        service = self.env["cloud.service"].create(
            {"name": "Shop A", "owner_id": self.both.id, "company_id": self.company_a.id}
        )
        self.login(self.both)
        self.opener.cookies.set("cids", str(self.company_b.id))
        response, events = self.send("Hi", assistant_id=self.assistant.id, cloud_service_id=service.id)
        self.assertEqual(response.status_code, 400, response.text)
        self.assertFalse(events)
        self.assertEqual(
            response.json()["error"]["message"],
            "Shop A belongs to Company A: switch to Company A to chat with its tools.",
        )
        # a member who does not work in company A is not told it exists
        service.member_ids = self.user_b
        self.login(self.user_b)
        response, _events = self.send("Hi", assistant_id=self.assistant.id, cloud_service_id=service.id)
        self.assertEqual(response.status_code, 404, response.text)
        self.assertFalse(self.env["ai.conversation"].search([("cloud_service_id", "=", service.id)]))

    def test_a_user_of_both_is_billed_and_budgeted_in_the_company_chatted_in(self):
        Budget = self.env["ai.budget"]
        cap_a = Budget.create(
            {"name": "A's cap", "company_id": self.company_a.id, "scope": "company", "unit": "tokens", "amount": 1000}
        )
        cap_b = Budget.create(
            {
                "name": "B's cap",
                "company_id": self.company_b.id,
                "scope": "user",
                "user_id": self.both.id,
                "unit": "tokens",
                "amount": 100,
            }
        )
        self.login(self.both)
        self.opener.cookies.set("cids", str(self.company_b.id))
        self.llm.queue(Turn(text="Hello.", usage=openai_usage(150, 0)))
        response, events = self.send("Hi", assistant_id=self.assistant.id)
        self.assertEqual(text_of(events), "Hello.", response.text)
        conversation_b = self.conversation(events[0].data["conversation_id"])
        self.assertEqual(conversation_b.company_id, self.company_b)
        usage = self.env["ai.usage"].search([("user_id", "=", self.both.id)])
        self.assertEqual((usage.company_id, usage.total_tokens), (self.company_b, 150))
        (cap_a | cap_b).invalidate_recordset()
        self.assertEqual((cap_a.spent, cap_b.spent), (0, 150), "only B's budgets are charged")
        # B's spent budget refuses her in B: a new conversation, or B's, even while A is her current company
        for cids, conversation in (
            (self.company_b, None),
            (self.company_a | self.company_b, conversation_b),
        ):
            with self.subTest(cids=cids.ids, conversation=bool(conversation)):
                self.opener.cookies.set("cids", "-".join(str(c.id) for c in cids))
                body = {"conversation_id": conversation.id} if conversation else {}
                response, events = self.send("Again", assistant_id=self.assistant.id, **body)
                self.assertEqual(response.status_code, 402, response.text)
                self.assertIn("“B's cap”", response.json()["error"]["message"])
        self.assertEqual(len(self.llm.requests), 1)
        # and not in A, where A's budgets are charged
        response, events = self.chat(self.assistant, cids=self.company_a)
        self.assertEqual(text_of(events), "Hello.", response.text)
        self.assertEqual(self.conversation(events[0].data["conversation_id"]).company_id, self.company_a)
        usage = self.env["ai.usage"].search([("user_id", "=", self.both.id)], order="id")
        self.assertEqual(usage.company_id, self.company_a | self.company_b)
        self.assertEqual(usage[-1].company_id, self.company_a)
        (cap_a | cap_b).invalidate_recordset()
        self.assertEqual((cap_a.spent, cap_b.spent), (usage[-1].total_tokens, 150))
