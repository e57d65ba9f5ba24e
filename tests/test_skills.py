"""Skills an MCP server publishes (extension io.modelcontextprotocol/skills), in Odoo: the sync
lists them on the server's form without reading a file; an assistant given a skill offers its name
and description, and the chat's user sees the model load it as any tool call, audited; a file that
is not what the server listed is refused, naming the check; an admin switches a server's skills off."""

from odoo.exceptions import AccessError
from odoo.tests import new_test_user, tagged

from odoo.addons.ai_mcp.services.mcp import running_hub
from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn
from odoo.addons.ai_mcp.testing.skills_server import BODY_LINE, CHECKLIST_URI, SKILL_URI, SkillsServer

from .chat_common import AI_USER_GROUPS, ChatCase


def offered(body):
    return [tool["function"]["name"] for tool in body.get("tools") or []]


def results(events):
    return [e.data for e in events if e.event == "tool_result"]


@tagged("post_install", "-at_install")
class TestSkills(ChatCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.skills_server = SkillsServer().start()
        cls.addClassCleanup(cls.skills_server.stop)
        cls.invoices = cls.env["mcp.server"].create(
            {"name": "Invoices", "scope": "system", "url": cls.skills_server.url}
        )
        result = cls.invoices._sync_tools()
        assert not result.get("error"), result
        cls.addClassCleanup(cls._close_invoices)
        cls.skill = cls.invoices.skill_ids
        cls.assistant.write({"mcp_server_ids": [(4, cls.invoices.id)], "mcp_skill_ids": [(6, 0, cls.skill.ids)]})

    @classmethod
    def _close_invoices(cls):
        hub = running_hub()
        if hub is not None:
            hub.run(hub.aclose_server(cls.invoices._server_key()))

    def setUp(self):
        super().setUp()
        self.skills_server.tamper = None
        self.skills_server.requests.clear()

    def review(self):
        self.login(self.user)
        self.llm.queue(
            Turn(tool_calls=(ToolCall("load_skill", {"skill": "invoice-review"}, id="call_load"),)),
            Turn(text="Reviewed."),
        )
        _response, events = self.send("Review the invoice.")
        return events

    def test_the_sync_lists_the_skill_on_the_server_without_reading_its_files(self):
        self.assertEqual(
            (self.skill.name, self.skill.description, self.skill.uri, self.skill.file_count),
            ("invoice-review", "Review a supplier invoice before it is posted", SKILL_URI, 2),
        )
        self.env.flush_all()
        self.env.cr.execute("UPDATE mcp_skill SET write_date = '2000-01-01' WHERE id = %s", (self.skill.id,))
        self.env.invalidate_all()
        self.invoices._sync_tools()
        self.assertIn("skills/list", [method for method, _ in self.skills_server.requests])
        self.assertEqual(self.skills_server.reads(), [])
        self.assertEqual(self.skill.write_date.year, 2000, "a skill listed as it was is not rewritten")

    def test_the_model_loads_the_skill_it_was_offered_and_the_call_is_shown_and_audited(self):
        events = self.review()

        first = self.llm.requests[0]
        self.assertIn("load_skill", offered(first))
        load = next(t for t in first["tools"] if t["function"]["name"] == "load_skill")
        self.assertIn("invoice-review: Review a supplier invoice", load["function"]["description"])
        self.assertNotIn(BODY_LINE, str(first), "no body before the model asks")
        (loaded,) = results(events)
        self.assertTrue(loaded["ok"])
        self.assertIn(BODY_LINE, loaded["model_text"])
        self.assertEqual(self.skills_server.reads(), [SKILL_URI], "only the SKILL.md, once the model asked")
        call = next(e.data for e in events if e.event == "tool_call")
        self.assertEqual((call["server"], call["tool"]), ("Invoices", "load_skill"))
        audit = self.env["ai.tool.call"].search([("call_id", "=", "call_load")])
        self.assertEqual((audit.server_name, audit.tool_name, audit.status), ("Invoices", "load_skill", "ok"))
        self.assertEqual(audit.server_id, self.invoices)

    def test_a_tampered_skill_is_refused_naming_the_check_and_the_file(self):
        self.skills_server.tamper = "digest"

        events = self.review()

        (refused,) = results(events)
        self.assertFalse(refused["ok"])
        self.assertEqual(refused["error_code"], "SKILL_VERIFICATION_FAILED")
        self.assertIn(f"digest check failed for {SKILL_URI}", refused["model_text"])
        self.assertNotIn("BIC number", refused["model_text"])
        self.assertNotIn(CHECKLIST_URI, self.skills_server.reads())
        audit = self.env["ai.tool.call"].search([("call_id", "=", "call_load")])
        self.assertEqual((audit.status, audit.error_code), ("error", "SKILL_VERIFICATION_FAILED"))
        # the admin's line on the server's Skills tab: which check failed, for which file
        self.skill.invalidate_recordset()
        self.assertIn(f"digest check failed for {SKILL_URI}", self.skill.last_refusal)
        self.assertTrue(self.skill.last_refusal_date)

    def test_skills_switched_off_on_the_server_are_offered_to_no_model(self):
        self.invoices.skills_enabled = False
        self.login(self.user)
        self.llm.queue(Turn(text="No skill."))

        self.send("Review the invoice.")

        self.assertNotIn("load_skill", offered(self.llm.requests[0]))
        self.assertEqual(self.skills_server.reads(), [])

    def test_a_skill_not_chosen_for_the_assistant_is_not_offered(self):
        self.assistant.mcp_skill_ids = [(5, 0, 0)]
        self.login(self.user)
        self.llm.queue(Turn(text="No skill."))

        self.send("Review the invoice.")

        self.assertNotIn("load_skill", offered(self.llm.requests[0]))


@tagged("post_install", "-at_install")
class TestUserServerSkills(ChatCase):
    """A user's own server (a user server of her cloud service) publishes skills: her sync lists
    them, her turns and her service's members' turns in the service's conversations are offered
    them, as the server's tools are, and nobody else reads or is offered them."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.env["ir.config_parameter"].sudo().set_param("ai_mcp.allowed_hosts", "127.0.0.1")
        cls.skills_server = SkillsServer().start()
        cls.addClassCleanup(cls.skills_server.stop)
        cls.member = new_test_user(cls.env, "chat_member", groups=AI_USER_GROUPS, name="Member User")
        cls.service = (
            cls.env["cloud.service"]
            .with_user(cls.user)
            .create({"name": "My invoices", "member_ids": [(4, cls.member.id)]})
        )
        cls.mine = (
            cls.env["mcp.server"]
            .with_user(cls.user)
            .create(
                {"name": "My skills", "scope": "user", "cloud_service_id": cls.service.id, "url": cls.skills_server.url}
            )
        )
        cls.servers_closed_at_end = (cls.mine,)
        cls.sync = cls.mine.with_user(cls.user).action_sync_tools()

    def setUp(self):
        super().setUp()
        self.skills_server.tamper = None
        self.skills_server.requests.clear()

    def review(self, user, **body):
        self.login(user)
        self.llm.queue(
            Turn(tool_calls=(ToolCall("load_skill", {"skill": "invoice-review"}, id="call_load"),)),
            Turn(text="Reviewed."),
        )
        _response, events = self.send("Review the invoice.", **body)
        return events

    def test_her_sync_lists_the_skills_of_her_own_server(self):
        self.assertEqual(self.sync["params"]["type"], "success", self.sync["params"]["message"])
        skills = self.env["mcp.skill"].with_user(self.user).search([])
        self.assertEqual((skills.name, skills.server_id, skills.uri), ("invoice-review", self.mine, SKILL_URI))
        self.assertEqual(self.mine.with_user(self.user).skill_ids, skills, "on her server's Skills tab")

    def test_her_turn_in_her_service_loads_her_servers_skill(self):
        events = self.review(self.user, cloud_service_id=self.service.id)

        self.assertIn("load_skill", offered(self.llm.requests[0]))
        (loaded,) = results(events)
        self.assertTrue(loaded["ok"], loaded)
        self.assertIn(BODY_LINE, loaded["model_text"])
        call = next(e.data for e in events if e.event == "tool_call")
        self.assertEqual((call["server"], call["tool"]), ("My skills", "load_skill"))
        audit = self.env["ai.tool.call"].search([("call_id", "=", "call_load")])
        self.assertEqual((audit.server_id, audit.user_id, audit.status), (self.mine, self.user, "ok"))

    def test_a_member_of_her_service_is_offered_its_skills_but_reads_none_of_its_records(self):
        events = self.review(self.member, cloud_service_id=self.service.id)

        (loaded,) = results(events)
        self.assertTrue(loaded["ok"], loaded)
        self.assertFalse(self.env["mcp.skill"].with_user(self.member).search([]), "the owner's, as her server is")

    def test_her_skills_are_not_offered_outside_her_service_nor_once_she_switches_them_off(self):
        self.login(self.user)
        self.llm.queue(Turn(text="No skill."), Turn(text="No skill."))
        self.send("Review the invoice.")
        self.mine.with_user(self.user).skills_enabled = False
        self.send("Review the invoice.", cloud_service_id=self.service.id)

        self.assertEqual([offered(body).count("load_skill") for body in self.llm.requests], [0, 0])
        self.assertEqual(self.skills_server.reads(), [])

    def test_another_user_neither_reads_her_skills_nor_is_offered_them(self):
        skill = self.mine.skill_ids
        Skill = self.env["mcp.skill"].with_user(self.other)
        self.assertFalse(Skill.search([]))
        with self.assertRaises(AccessError):
            Skill.browse(skill.id).read(["name", "manifest"])
        self.login(self.other)
        self.llm.queue(Turn(text="No skill."), Turn(text="No skill."))
        self.send("Review the invoice.")
        self.send("Review the invoice.", cloud_service_id=self.service.id)

        self.assertFalse([body for body in self.llm.requests if "load_skill" in offered(body)])
        self.assertEqual(self.skills_server.reads(), [])

    def test_a_tampered_skill_of_her_server_is_refused_and_written_on_her_skill(self):
        self.skills_server.tamper = "digest"

        events = self.review(self.user, cloud_service_id=self.service.id)

        (refused,) = results(events)
        self.assertEqual(refused["error_code"], "SKILL_VERIFICATION_FAILED")
        skill = self.mine.with_user(self.user).skill_ids
        self.assertIn(f"digest check failed for {SKILL_URI}", skill.last_refusal)
