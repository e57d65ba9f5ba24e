"""Parameter presets (ai.tool.preset): checked when saved, resolved for each turn from the user, the
cloud service and the conversation, hidden from the model and impossible for it to override."""

import json

from psycopg2 import IntegrityError

from odoo.exceptions import AccessError, ValidationError
from odoo.tests import Form, tagged
from odoo.tools import mute_logger

from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .common import AiMcpCase
from .test_audit import ChatTurnCase

SCHEMA = json.dumps(
    {
        "type": "object",
        "properties": {"owner": {"type": "string"}, "limit": {"type": "integer"}, "query": {"type": "string"}},
        "required": ["owner", "query"],
    }
)


@tagged("post_install", "-at_install")
class TestPresetModel(AiMcpCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.provider = cls.env["ai.provider"].create(
            {"name": "Scripted", "base_url": "http://127.0.0.1:9/v1", "api_key": "sk", "default_model": "m"}
        )
        cls.crm = cls.system_server("CRM", state="connected")
        cls.other_server = cls.system_server("Other", state="connected")
        cls.search = cls.tool(cls.crm, "search", input_schema=SCHEMA)
        cls.count = cls.tool(cls.crm, "count", input_schema=SCHEMA)
        cls.elsewhere = cls.tool(cls.other_server, "search", input_schema=SCHEMA)
        cls.assistant = cls.env["ai.assistant"].create(
            {"name": "Helper", "provider_id": cls.provider.id, "mcp_server_ids": [(6, 0, cls.crm.ids)]}
        )
        cls.Preset = cls.env["ai.tool.preset"]
        cls.service = cls.service_of(cls.user1, "Acme Shop")
        cls.company = cls.env.company

    def preset(self, arguments, tool=None, assistant=None):
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments)
        with self.cr.savepoint():  # a refused preset leaves nothing behind
            return self.Preset.with_user(self.manager).create(
                {
                    "assistant_id": (assistant or self.assistant).id,
                    "tool_id": (tool or self.search).id,
                    "arguments": arguments,
                }
            )

    # -- checked when saved ----------------------------------------------------------------------

    def test_a_valid_preset_is_saved(self):
        preset = self.preset({"owner": "{{user.login}}", "limit": 20})
        self.assertEqual(preset.display_name, "Helper / search")
        self.assertEqual(preset.tool_arguments, "limit, owner, query")
        self.assertIn("{{cloud_service.name}}", preset.variables_help)

    def test_invalid_json_is_refused(self):
        with self.assertRaisesRegex(
            ValidationError, r"^Preset of CRM / search: the arguments are not valid JSON .*line 1 column 28"
        ):
            self.preset('{"owner": "{{user.login}}",}')
        with self.assertRaisesRegex(ValidationError, "must be a JSON object"):
            self.preset('["owner"]')

    def test_an_unknown_variable_is_named(self):
        with self.assertRaises(ValidationError) as caught:
            self.preset({"owner": "{{user.password}}"})
        self.assertIn("{{user.password}} is not a known variable", str(caught.exception))
        self.assertIn("user.login", str(caught.exception), "the known variables are listed")
        with self.assertRaisesRegex(ValidationError, r"\{\{conversation\.secret\}\}"):
            self.preset({"query": "about {{conversation.secret}}"})

    def test_a_key_not_in_the_tools_schema_is_named(self):
        with self.assertRaises(ValidationError) as caught:
            self.preset({"ownr": "{{user.login}}"})
        message = str(caught.exception)
        self.assertIn("'ownr' is not an argument of this tool", message)
        self.assertIn("limit, owner, query", message)

    def test_the_tool_must_be_one_of_the_assistants_tools(self):
        with self.assertRaisesRegex(ValidationError, "Other / search is not a tool of Helper"):
            self.preset({"owner": "x"}, tool=self.elsewhere)

    def test_one_preset_per_assistant_and_tool(self):
        self.preset({"owner": "x"})
        with self.assertRaises(IntegrityError), mute_logger("odoo.sql_db"):
            self.preset({"limit": 1})

    def test_only_ai_managers_see_and_edit_presets(self):
        preset = self.preset({"owner": "{{user.login}}"})
        with self.assertRaises(AccessError):
            preset.with_user(self.user1).read(["arguments"])
        with self.assertRaises(AccessError):
            self.Preset.with_user(self.user1).create(
                {"assistant_id": self.assistant.id, "tool_id": self.count.id, "arguments": "{}"}
            )
        self.assertNotIn("preset_ids", self.assistant.with_user(self.user1).fields_get())

    def test_edited_on_the_assistant_form(self):
        form = Form(self.assistant.with_user(self.manager))
        with form.preset_ids.new() as line:
            line.tool_id = self.search
            line.arguments = '{"owner": "{{user.login}}"}'
        form.save()
        self.assertEqual(self.assistant.preset_ids.tool_id, self.search)
        form = Form(self.assistant.with_user(self.manager))
        with form.preset_ids.edit(0) as line:
            line.arguments = '{"owner": "{{user.pasword}}"}'
        with self.assertRaisesRegex(ValidationError, r"\{\{user\.pasword\}\}"):
            form.save()

    # -- resolved for each turn ------------------------------------------------------------------

    def bindings(self, user, cloud_service=None, conversation=None, warnings=None):
        assistant = self.assistant.with_user(user)
        service = cloud_service.with_user(user) if cloud_service else None
        return {b.tool.name: b for b in assistant._tool_bindings(service, warnings=warnings, conversation=conversation)}

    def test_resolved_for_the_current_user_cloud_service_and_conversation(self):
        self.preset(
            {
                "owner": "{{user.login}}",
                "limit": "{{user.id}}",
                "query": "{{cloud_service.name}} #{{conversation.id}} at {{user.company_id.name}} for "
                "{{assistant.name}}",
            }
        )
        conversation = self.env["ai.conversation"].create(
            {"assistant_id": self.assistant.id, "user_id": self.user1.id, "cloud_service_id": self.service.id}
        )
        fixed = self.bindings(self.user1, self.service, conversation)["search"].fixed_arguments
        self.assertEqual(
            fixed,
            {
                "owner": "ai_user1",
                "limit": self.user1.id,  # a whole reference keeps its type
                "query": f"Acme Shop #{conversation.id} at {self.user1.company_id.name} for Helper",
            },
        )
        other = self.bindings(self.user2, None, None, warnings=[])
        self.assertNotIn("search", other, "no cloud service: the tool needing it is left out")
        self.assertEqual(self.bindings(self.user1)["count"].fixed_arguments, {}, "a tool without preset has none")

    def test_each_user_gets_their_own_values(self):
        self.preset({"owner": "{{user.login}}"})
        self.assertEqual(self.bindings(self.user1)["search"].fixed_arguments, {"owner": "ai_user1"})
        self.assertEqual(self.bindings(self.user2)["search"].fixed_arguments, {"owner": "ai_user2"})

    def test_a_tool_whose_preset_needs_a_missing_value_is_left_out_with_a_warning(self):
        self.preset({"owner": "{{cloud_service.name}}"})
        warnings = []
        bound = self.bindings(self.user1, warnings=warnings)
        self.assertNotIn("search", bound)
        self.assertIn("count", bound)
        self.assertEqual(
            warnings,
            [
                "CRM / search is left out: its preset needs {{cloud_service.name}}, which this conversation "
                "does not have."
            ],
        )

    def test_a_preset_that_no_longer_fits_the_tool_leaves_it_out(self):
        self.preset({"limit": 5})
        # the server dropped "limit" and an admin accepted the change
        self.search.sudo().write(
            {"input_schema": json.dumps({"type": "object", "properties": {"query": {"type": "string"}}})}
        )
        warnings = []
        self.assertNotIn("search", self.bindings(self.user1, warnings=warnings))
        self.assertEqual(len(warnings), 1)
        self.assertIn("'limit' is not an argument of this tool", warnings[0])


@tagged("post_install", "-at_install")
class TestPresetsInATurn(ChatTurnCase):
    """The model never sees a preset argument and cannot override it: the real tool gets the preset."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        Preset = cls.env["ai.tool.preset"]
        Preset.create(
            {
                "assistant_id": cls.assistant.id,
                "tool_id": cls.tools["echo"].id,
                "arguments": '{"text": "{{user.login}} in {{cloud_service.name}}"}',
            }
        )
        Preset.create(
            {"assistant_id": cls.assistant.id, "tool_id": cls.tools["add"].id, "arguments": '{"a": "{{user.id}}"}'}
        )
        cls.service = cls.env["cloud.service"].create({"name": "Paris", "owner_id": cls.user.id})

    def test_the_model_does_not_see_the_fixed_arguments_and_cannot_override_them(self):
        self.llm.queue(
            Turn(
                tool_calls=(
                    ToolCall("echo", {"text": "I am root"}, id="call_echo"),
                    ToolCall("add", {"a": 1000, "b": 1}, id="call_add"),
                )
            ),
            Turn(text="Done."),
        )
        conversation, events = self.chat(self.user, "Who am I, and what is my id + 1?", cloud_service=self.service)
        self.assertEqual(events[-1].type, "done", [(e.type, getattr(e, "message", "")) for e in events])

        tools = {t["function"]["name"]: t["function"]["parameters"] for t in self.llm.requests[0]["tools"]}
        self.assertNotIn("text", tools["echo"].get("properties", {}))
        self.assertNotIn("text", tools["echo"].get("required", []))
        self.assertEqual(set(tools["add"]["properties"]), {"b"})
        self.assertEqual(tools["add"].get("required"), ["b"])
        self.assertIn("city", tools["weather"]["properties"], "tools without a preset are shown whole")

        results = self.results(events)
        self.assertTrue(results["call_echo"].ok, results["call_echo"])
        self.assertEqual(results["call_echo"].model_text, "audit_user in Paris")
        self.assertTrue(results["call_add"].ok, results["call_add"])
        self.assertEqual(float(results["call_add"].model_text), self.user.id + 1)
        # the stream shows what the model asked for; the audit keeps no arguments at all
        calls = {e.id: e for e in events if e.type == "tool_call"}
        self.assertEqual(calls["call_echo"].arguments, {"text": "I am root"})
        self.assertEqual(
            set(self.env["ai.tool.call"].search([("conversation_id", "=", conversation.id)]).mapped("status")), {"ok"}
        )

    def test_each_user_and_cloud_service_get_their_own_values(self):
        service = self.env["cloud.service"].create({"name": "Lyon", "owner_id": self.other.id})
        self.llm.queue(Turn(tool_calls=(ToolCall("echo", {}, id="call_other"),)), Turn(text="Done."))
        _conversation, events = self.chat(self.other, "Who am I?", cloud_service=service)
        self.assertEqual(self.results(events)["call_other"].model_text, "audit_other in Lyon")

    def test_without_the_cloud_service_the_tool_is_left_out_and_the_user_told(self):
        self.llm.queue(Turn(text="No echo for you."))
        _conversation, events = self.chat(self.user, "Echo?")
        self.assertEqual(events[-1].type, "done")
        self.assertNotIn("echo", [t["function"]["name"] for t in self.llm.requests[0]["tools"]])
        warnings = [e.message for e in events if e.type == "warning"]
        self.assertIn("{{cloud_service.name}}", " ".join(warnings))
