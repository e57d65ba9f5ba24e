"""A provider that takes its key in the query, as some gateways do: an AI manager reads the names
of its query parameters, never their values (over JSON-RPC, as the web client reads), the chatter
keeps no trace of them, and a turn still sends them while the log shows only their names."""

import json

from odoo.tests import new_test_user, tagged

from odoo.addons.ai_mcp.testing.scripted_llm import Turn

from .chat_common import AI_USER_GROUPS, ChatCase
from .log_capture import root_log_lines

QUERY_KEY = "gw-7d2b-query-secret"
QUERY = json.dumps({"gateway_key": QUERY_KEY, "tenant": "acme"})


@tagged("post_install", "-at_install")
class TestQuerySecrets(ChatCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.manager = new_test_user(
            cls.env, "query_manager", groups=f"{AI_USER_GROUPS},ai_mcp.group_ai_manager", name="AI Manager"
        )

    def set_query_as_manager(self):
        tracked = self.provider.with_user(self.manager).with_context(tracking_disable=False, mail_notrack=False)
        tracked.write({"extra_query": QUERY})
        self.env.flush_all()
        self.env.cr.precommit.run()  # where mail writes the tracking values

    def call_kw(self, method, args, kwargs):
        body = {"model": "ai.provider", "method": method, "args": args, "kwargs": kwargs}
        answer = self.jsonrpc(f"/web/dataset/call_kw/ai.provider/{method}", body)
        self.assertNotIn("error", answer, answer.get("error"))
        return answer["result"]

    def test_a_manager_reads_the_names_of_the_query_parameters_never_their_values(self):
        self.set_query_as_manager()
        self.login(self.manager)
        listed = self.call_kw(
            "web_search_read",
            [],
            {"domain": [["id", "=", self.provider.id]], "specification": {"name": {}, "extra_query": {}}},
        )
        read = self.call_kw("read", [self.provider.ids], {})
        for answer in (listed, read):
            self.assertNotIn(QUERY_KEY, json.dumps(answer))
        (record,) = read
        self.assertEqual(record["extra_query"], False)
        self.assertEqual(record["extra_query_names"], "gateway_key, tenant")
        self.assertTrue(record["extra_query_set"])
        # the chatter: no tracking value holds them
        self.env.invalidate_all()
        values = self.env["mail.tracking.value"].search(
            [("mail_message_id.model", "=", "ai.provider"), ("mail_message_id.res_id", "=", self.provider.id)]
        )
        self.assertNotIn(QUERY_KEY, json.dumps(values.read(), default=str))

    def test_a_turn_sends_the_query_parameters_and_the_log_shows_only_their_names(self):
        self.set_query_as_manager()
        self.llm.queue(Turn(text="Hello."))
        self.login(self.user)
        lines = root_log_lines(self)
        response, events = self.send("Hi")
        self.assertEqual(response.status_code, 200, response.text)
        self.assertEqual(events[-1].event, "done", [e.data for e in events])
        self.assertEqual(self.llm.queries, [{"gateway_key": QUERY_KEY, "tenant": "acme"}])
        logged = "\n".join(lines)
        self.assertNotIn(QUERY_KEY, logged)
        # the request is still logged, its query's names with it
        self.assertIn("gateway_key=***", logged)
