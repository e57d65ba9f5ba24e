"""Usage of every model call (ai.usage): a real chat turn (the scripted LLM, a real MCP server)
leaves one row per model call with the tokens the provider reported and their cost at the model's
prices, readable by its user and the AI managers only."""

from datetime import datetime

from lxml import etree

from odoo import fields
from odoo.exceptions import AccessError, ValidationError
from odoo.tests import new_test_user, tagged

from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn, openai_usage

from .chat_common import AI_USER_GROUPS, ChatCase


@tagged("post_install", "-at_install")
class TestUsage(ChatCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.model = cls.env["ai.provider.model"].create(
            {
                "provider_id": cls.provider.id,
                "name": "scripted-model",
                "price_input": 2.5,
                "price_cached_input": 1.25,
                "price_output": 10.0,
                "currency_id": cls.env.company.currency_id.id,
            }
        )

    def _tool_turn(self):
        self.llm.queue(
            Turn(
                tool_calls=(ToolCall("add", {"a": 2, "b": 3}, id="call_add"),), usage=openai_usage(1000, 50, cached=600)
            ),
            Turn(text="5.", usage=openai_usage(1200, 20, reasoning=8)),
        )
        self.login(self.user)
        response, events = self.send("What is 2 + 3?")
        self.assertEqual(response.status_code, 200, response.text)
        self.assertEqual(events[-1].event, "done", events[-1].data)
        return events

    def test_each_model_call_is_recorded_with_its_tokens_and_cost(self):
        events = self._tool_turn()
        conversation = self.conversation(events[0].data["conversation_id"])
        rows = self.env["ai.usage"].search([("conversation_id", "=", conversation.id)], order="round, id")
        self.assertEqual(
            [(r.round, r.input_tokens, r.cached_input_tokens, r.output_tokens, r.reasoning_tokens) for r in rows],
            [(1, 1000, 600, 50, 0), (2, 1200, 0, 20, 8)],
        )
        self.assertEqual(rows.user_id, self.user)
        self.assertEqual(rows.assistant_id, self.assistant)
        self.assertEqual(rows.provider_id, self.provider)
        self.assertEqual(rows.model_id, self.model)
        self.assertEqual(rows.company_id, self.user.company_id)
        self.assertEqual(rows.currency_id, self.user.company_id.currency_id)
        # round 1: 400 input at 2.5, 600 cached at 1.25, 50 output at 10 (per million)
        # round 2: 1200 input at 2.5, 20 output at 10
        self.assertAlmostEqual(rows[0].cost, 0.00225, places=6)
        self.assertAlmostEqual(rows[1].cost, 0.0032, places=6)
        self.assertEqual(events[-1].data["usage"]["cached_input_tokens"], 600)
        self.assertEqual([e.data["round"] for e in events if e.event == "usage"], [1, 2])

    def test_a_later_price_does_not_rewrite_the_past(self):
        events = self._tool_turn()
        self.model.price_output = 1000.0
        rows = self.env["ai.usage"].search([("conversation_id", "=", events[0].data["conversation_id"])])
        self.assertAlmostEqual(sum(rows.mapped("cost")), 0.00545, places=6)

    def test_a_model_without_prices_records_tokens_at_no_cost(self):
        self.model.write({"price_input": 0, "price_cached_input": 0, "price_output": 0})
        events = self._tool_turn()
        rows = self.env["ai.usage"].search([("conversation_id", "=", events[0].data["conversation_id"])])
        self.assertEqual(sum(rows.mapped("total_tokens")), 2270)
        self.assertEqual(sum(rows.mapped("cost")), 0)

    def test_users_read_their_own_usage_and_managers_everyones(self):
        self._tool_turn()
        self.llm.queue(Turn(text="Hi.", usage=openai_usage(300, 10)))
        self.login(self.other)
        _response, events = self.send("hello")
        self.assertEqual(events[-1].event, "done", events[-1].data)
        mine = self.env["ai.usage"].with_user(self.user).search([])
        self.assertEqual((len(mine), mine.user_id), (2, self.user))
        theirs = self.env["ai.usage"].with_user(self.other).search([])
        self.assertEqual((len(theirs), theirs.user_id), (1, self.other))
        with self.assertRaises(AccessError):
            mine[0].with_user(self.other).read(["cost"])
        with self.assertRaises(AccessError):
            mine[0].with_user(self.user).write({"cost": 0})
        manager = new_test_user(self.env, "usage_manager", groups=f"{AI_USER_GROUPS},ai_mcp.group_ai_manager")
        everyones = self.env["ai.usage"].with_user(manager).search([])
        self.assertEqual(everyones, mine | theirs)
        self.assertEqual(everyones.user_id, self.user | self.other)

    def test_the_reports_add_up_one_currency_when_companies_bill_in_two(self):
        main = self.env.company
        other_currency = self.env.ref("base.EUR" if main.currency_id.name != "EUR" else "base.USD")
        other_currency.active = True
        abroad = self.env["res.company"].create({"name": "Abroad", "currency_id": other_currency.id})
        # in both companies, today: one of the main currency is worth half of the other (a company's
        # own rate wins over a shared one, and the database may hold some)
        self.env["res.currency.rate"].create(
            [
                {"currency_id": other_currency.id, "rate": 0.5, "name": fields.Date.today(), "company_id": company.id}
                for company in (main, abroad)
            ]
        )
        # shared by both companies, as test_companies.py shares them: the assistant's server first
        for shared in (self.server, self.provider, self.assistant):
            shared.company_id = False
        self.user.company_ids |= abroad
        self.login(self.user)
        for company in (main, abroad):
            # after logging in, as the company switcher sets it (logging in starts a new session)
            self.opener.cookies.set("cids", str(company.id))
            self.llm.queue(Turn(text="Hi.", usage=openai_usage(40_000, 0)))
            _response, events = self.send("hello")
            self.assertEqual(events[-1].event, "done", events[-1].data)
        rows = self.env["ai.usage"].search([("user_id", "=", self.user.id)], order="id")
        # 2.50 per million: 0.10 at home, 0.05 abroad (the prices converted), worth 0.10 at home
        self.assertEqual(rows.currency_id, main.currency_id | other_currency)
        self.assertEqual([round(cost, 6) for cost in rows.mapped("cost")], [0.10, 0.05])

        manager = new_test_user(
            self.env,
            "usage_manager",
            groups=f"{AI_USER_GROUPS},ai_mcp.group_ai_manager",
            company_ids=[(6, 0, (main | abroad).ids)],
        )
        Usage = self.env["ai.usage"].with_user(manager).with_context(allowed_company_ids=(main | abroad).ids)
        # what the pivot, the graph and the list's total add up: one currency, the main company's
        views = Usage.get_views([(False, "pivot"), (False, "graph"), (False, "list")])["views"]
        for view in ("pivot", "graph"):
            measures = {
                node.get("name")
                for node in etree.fromstring(views[view]["arch"]).iter("field")
                if node.get("type") == "measure"
            }
            self.assertIn("report_cost", measures, view)
            self.assertNotIn("cost", measures, view)
        totals = {
            node.get("name"): node.get("options")
            for node in etree.fromstring(views["list"]["arch"]).iter("field")
            if node.get("sum")
        }
        self.assertIn("report_currency_id", totals["report_cost"])
        self.assertNotIn("cost", totals)
        self.assertFalse(Usage.fields_get(["cost"])["cost"].get("aggregator"), "never summed across currencies")
        [(currencies, total)] = Usage._read_group(
            [("user_id", "=", self.user.id)], [], ["report_currency_id:recordset", "report_cost:sum"]
        )
        self.assertEqual(currencies, main.currency_id)
        self.assertAlmostEqual(total, 0.20, places=6)

    def test_negative_prices_are_refused_naming_the_field(self):
        with self.assertRaisesRegex(ValidationError, "Output Price of scripted-model cannot be negative"):
            with self.cr.savepoint():
                self.model.price_output = -1
        self.model.invalidate_recordset()
        self.assertEqual(self.model.price_output, 10.0)

    # -- the totals the chat shows -----------------------------------------------------------------

    def _row(self, date, tokens, cost, user=None, company=None):
        company = company or self.user.company_id
        return self.env["ai.usage"].create(
            {
                "date": date,
                "user_id": (user or self.user).id,
                "company_id": company.id,
                "currency_id": company.currency_id.id,
                "assistant_id": self.assistant.id,
                "model_name": "scripted-model",
                "input_tokens": tokens,
                "total_tokens": tokens,
                "cost": cost,
            }
        )

    def test_the_chat_shows_the_conversation_total_after_its_turn(self):
        events = self._tool_turn()
        conversation_id = events[0].data["conversation_id"]
        totals = self.jsonrpc("/ai_mcp/chat/usage", {"conversation_id": conversation_id})["result"]
        self.assertEqual(totals["conversation"]["tokens"], 2270)
        [cost] = totals["conversation"]["costs"]
        self.assertAlmostEqual(cost["amount"], 0.00545, places=6)
        self.assertEqual(cost["currency"]["code"], self.user.company_id.currency_id.name)
        self.assertEqual(totals["month"]["tokens"], 2270, "this turn is this month's")
        conversation = self.conversation(conversation_id)
        self.assertEqual(conversation.usage_tokens, 2270)
        self.assertAlmostEqual(conversation.usage_cost, 0.00545, places=6)

    def test_a_conversation_of_a_model_without_prices_shows_tokens_only(self):
        self.model.write({"price_input": 0, "price_cached_input": 0, "price_output": 0})
        events = self._tool_turn()
        totals = self.jsonrpc("/ai_mcp/chat/usage", {"conversation_id": events[0].data["conversation_id"]})["result"]
        self.assertEqual(totals["conversation"], {"tokens": 2270, "costs": []})

    def test_someone_elses_conversation_total_is_refused(self):
        events = self._tool_turn()
        self.login(self.other)
        response = self.jsonrpc("/ai_mcp/chat/usage", {"conversation_id": events[0].data["conversation_id"]})
        self.assertEqual(response["error"]["data"]["name"], "werkzeug.exceptions.NotFound", response)

    def test_the_month_counts_the_users_own_rows_in_the_current_company_since_the_first(self):
        now = datetime(2026, 3, 15, 12, 0)
        other_company = self.env["res.company"].create({"name": "Usage Other Co"})
        self.user.write({"company_ids": [(4, other_company.id)], "tz": "UTC"})
        self._row(datetime(2026, 3, 1, 0, 0), 1000, 0.5)
        self._row(datetime(2026, 3, 15, 11, 0), 200, 0.25)
        self._row(datetime(2026, 2, 28, 23, 59), 40000, 9.0)  # last month
        self._row(datetime(2026, 3, 10), 7, 1.0, user=self.other)
        self._row(datetime(2026, 3, 10), 30, 1.0, company=other_company)
        Conversation = self.env["ai.conversation"].with_user(self.user)
        month = Conversation._chat_usage(now=now)["month"]
        self.assertEqual(month["tokens"], 1200)
        self.assertAlmostEqual(month["costs"][0]["amount"], 0.75)
        in_other = Conversation.with_company(other_company)._chat_usage(now=now)["month"]
        self.assertEqual(in_other["tokens"], 30)

    def test_the_month_starts_at_midnight_where_the_user_is(self):
        self.user.tz = "Asia/Shanghai"  # UTC+8: March begins on Feb 28 at 16:00 UTC
        self._row(datetime(2026, 2, 28, 16, 30), 100, 0)
        self._row(datetime(2026, 2, 28, 15, 30), 9000, 0)
        month = self.env["ai.conversation"].with_user(self.user)._chat_usage(now=datetime(2026, 3, 2))["month"]
        self.assertEqual(month, {"tokens": 100, "costs": []})
