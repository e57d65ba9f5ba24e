"""AI budgets (ai.budget): real chat turns (the scripted LLM, a real MCP server) are charged to the
budgets that apply to their user; a spent budget refuses the next turn and stops a turn under way
after its round, naming the budget and who can raise it; at 80% the chat warns once."""

import datetime
import re
from unittest.mock import patch

from lxml import etree

from odoo import fields
from odoo.exceptions import AccessError
from odoo.tests import new_test_user, tagged

from odoo.addons.ai_mcp.odoo_compat import USER_GROUPS
from odoo.addons.ai_mcp.testing.scripted_llm import ToolCall, Turn

from .chat_common import AI_USER_GROUPS, ChatCase
from .test_chat_discuss import DiscussCase

REFUSAL = re.compile(
    r"^Your (daily|weekly|monthly|yearly) AI budget “(.+)” \((.+)\) is spent\. An AI manager .*can raise it\.$"
)


def reported(prompt, completion=0):
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def tool_round(prompt):
    return Turn(tool_calls=(ToolCall("add", {"a": 2, "b": 3}),), usage=reported(prompt))


class BudgetCase(ChatCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # 2.50 per million input tokens: 40,000 tokens cost 0.10
        cls.env["ai.provider.model"].create(
            {
                "provider_id": cls.provider.id,
                "name": "scripted-model",
                "price_input": 2.5,
                "price_output": 10.0,
                "currency_id": cls.env.company.currency_id.id,
            }
        )
        cls.manager = new_test_user(
            cls.env, "budget_boss", groups=f"{AI_USER_GROUPS},ai_mcp.group_ai_manager", name="Aaron Boss"
        )

    def budget(self, amount, **values):
        return self.env["ai.budget"].create(
            {"name": "Chat cap", "scope": "user", "user_id": self.user.id, "amount": amount, **values}
        )

    def chat(self, *turns, conversation_id=None):
        self.llm.queue(*turns)
        self.login(self.user)
        body = {"conversation_id": conversation_id} if conversation_id else {}
        response, events = self.send("What is 2 + 3?", **body)
        return response, events

    def usage_rows(self, conversation_id):
        self.env.invalidate_all()
        return self.env["ai.usage"].search([("conversation_id", "=", conversation_id)], order="id")


@tagged("post_install", "-at_install")
class TestBudget(BudgetCase):
    def test_a_spent_budget_refuses_the_next_turn_naming_it_and_who_can_raise_it(self):
        budget = self.budget(0.10)
        response, events = self.chat(Turn(text="5.", usage=reported(40_000)))
        self.assertEqual(events[-1].event, "done", events[-1].data)
        conversation_id = events[0].data["conversation_id"]
        budget.invalidate_recordset()
        self.assertAlmostEqual(budget.spent, 0.10)
        self.assertEqual(budget.remaining, 0.0)

        messages = self.env["ai.message"].search_count([])
        response, events = self.chat(conversation_id=conversation_id)
        self.assertEqual(response.status_code, 402, response.text)
        error = response.json()["error"]
        self.assertEqual(error["code"], "BUDGET_SPENT")
        amount = budget._amount_text()
        self.assertEqual(
            error["message"].split(" An AI manager")[0],
            f"Your monthly AI budget “Chat cap” ({amount}) is spent.",
        )
        self.assertRegex(error["message"], REFUSAL)
        self.assertIn("Aaron Boss", error["message"])
        # nothing was stored: the message is the user's to send again
        self.assertEqual(self.env["ai.message"].search_count([]), messages)
        self.assertEqual(self.conversation(conversation_id).state, "idle")
        # a new conversation is refused alike, and none is created
        conversations = self.env["ai.conversation"].search_count([])
        response, _events = self.chat()
        self.assertEqual(response.json()["error"]["code"], "BUDGET_SPENT")
        self.assertEqual(self.env["ai.conversation"].search_count([]), conversations)
        self.assertEqual(len(self.llm.requests), 1)

    def test_a_turn_under_way_stops_after_the_round_that_spent_the_budget(self):
        self.budget(0.15)
        # each round costs 0.10: the second round spends the budget, the third never starts
        response, events = self.chat(tool_round(40_000), tool_round(40_000), Turn(text="5.", usage=reported(40_000)))
        self.assertEqual(response.status_code, 200, response.text)
        self.assertEqual(events[-1].event, "error")
        self.assertEqual(events[-1].data["code"], "BUDGET_SPENT")
        self.assertRegex(events[-1].data["message"], REFUSAL)
        self.assertEqual(len(self.llm.requests), 2)
        conversation_id = events[0].data["conversation_id"]
        self.assertEqual([row.round for row in self.usage_rows(conversation_id)], [1, 2])
        self.assertEqual(self.conversation(conversation_id).state, "idle")
        # both rounds' tool calls ran and were answered: the history stays whole for the next turn
        self.assertEqual([e.data["ok"] for e in events if e.event == "tool_result"], [True, True])

    def test_an_answer_to_an_approval_waits_while_the_budget_is_spent(self):
        budget = self.budget(0.10)
        self.tools["add"].requires_approval = True
        _response, events = self.chat(
            Turn(tool_calls=(ToolCall("add", {"a": 2, "b": 3}, id="call_add"),), usage=reported(40_000)),
            Turn(text="5.", usage=reported(40_000)),
        )
        self.assertEqual(events[-1].event, "approval_required")
        conversation_id = events[0].data["conversation_id"]
        response, _events = self.resume(conversation_id, approvals={"call_add": True})
        self.assertEqual(response.status_code, 402, response.text)
        self.assertRegex(response.json()["error"]["message"], REFUSAL)
        self.assertEqual(self.conversation(conversation_id).state, "awaiting_approval", "the question still stands")

        budget.with_user(self.manager).amount = 1.0
        _response, events = self.resume(conversation_id, approvals={"call_add": True})
        self.assertEqual(events[-1].event, "done", events[-1].data)
        self.assertEqual(len(self.llm.requests), 2)

    def test_the_warning_at_80_percent_is_given_once_per_period(self):
        self.budget(1000, unit="tokens")
        _response, events = self.chat(Turn(text="5.", usage=reported(850)))
        warnings = [e.data for e in events if e.event == "warning"]
        self.assertEqual(len(warnings), 1, warnings)
        self.assertEqual(warnings[0]["code"], "BUDGET_NEAR")
        self.assertEqual(warnings[0]["message"], "Your monthly AI budget “Chat cap” (1,000 tokens) is 85% spent.")
        self.assertEqual(events[-1].event, "done")
        # stored with the turn: a reload shows it again
        stored = self.stored_events(events[0].data["conversation_id"]).filtered(lambda e: e.type == "warning")
        self.assertEqual(len(stored), 1)

        conversation_id = events[0].data["conversation_id"]
        _response, events = self.chat(Turn(text="6.", usage=reported(50)), conversation_id=conversation_id)
        self.assertEqual(events[-1].event, "done")
        self.assertFalse([e for e in events if e.event == "warning"], "warned once per period")
        # a token budget counts tokens: 900 of 1000, the next call passes it, the turn after is refused
        _response, events = self.chat(Turn(text="7.", usage=reported(200)), conversation_id=conversation_id)
        self.assertEqual(events[-1].event, "done")
        response, _events = self.chat(conversation_id=conversation_id)
        self.assertEqual(response.json()["error"]["code"], "BUDGET_SPENT")
        self.assertIn("(1,000 tokens)", response.json()["error"]["message"])

    def test_one_charge_passing_80_and_100_percent_warns_with_the_share_spent(self):
        self.budget(1000, unit="tokens")
        _response, events = self.chat(Turn(text="5.", usage=reported(1200)))
        warnings = [e.data for e in events if e.event == "warning"]
        self.assertEqual(
            [(w["code"], w["message"]) for w in warnings],
            [("BUDGET_NEAR", "Your monthly AI budget “Chat cap” (1,000 tokens) is 120% spent.")],
            "told before the next turn is refused",
        )
        response, _events = self.chat(conversation_id=events[0].data["conversation_id"])
        self.assertEqual(response.json()["error"]["code"], "BUDGET_SPENT")

    def test_a_budget_made_mid_period_starts_from_the_usage_already_recorded_in_it(self):
        self.env.company.partner_id.tz = "UTC"
        _response, events = self.chat(Turn(text="5.", usage=reported(40_000)))
        self.assertEqual(events[-1].event, "done")
        self.llm.queue(Turn(text="Hi.", usage=reported(20_000)))
        self.login(self.other)
        _response, events = self.send("hello")
        self.assertEqual(events[-1].event, "done")
        # a call of the month before counts for no budget of this month
        self.env["ai.usage"].create(
            {
                "date": fields.Datetime.now().replace(day=1, hour=0, minute=0, second=0)
                - datetime.timedelta(seconds=1),
                "user_id": self.user.id,
                "company_id": self.env.company.id,
                "currency_id": self.env.company.currency_id.id,
                "total_tokens": 500_000,
                "cost": 5.0,
            }
        )
        as_manager = self.env["ai.budget"].with_user(self.manager)
        mine = as_manager.create({"name": "Mine", "scope": "user", "user_id": self.user.id, "amount": 0.15})
        company = as_manager.create({"name": "Ours", "scope": "company", "unit": "tokens", "amount": 150_000})
        self.assertAlmostEqual(mine.spent, 0.10)
        self.assertEqual(company.spent, 60_000)
        # the next call is charged on top of it: 0.20 of 0.15
        _response, events = self.chat(Turn(text="6.", usage=reported(40_000)))
        self.assertEqual(events[-1].event, "done")
        response, _events = self.chat()
        self.assertEqual(response.json()["error"]["code"], "BUDGET_SPENT")
        self.assertIn("“Mine”", response.json()["error"]["message"])

    def test_budgets_show_money_with_its_currency_and_tokens_as_whole_numbers(self):
        money = self.budget(0.05)
        tokens = self.budget(150_000, name="Tokens", unit="tokens")
        # 18,000 tokens at 2.50 per million: 0.045, not yet the 0.05 of the budget
        _response, events = self.chat(Turn(text="5.", usage=reported(18_000)))
        self.assertEqual(events[-1].event, "done")
        currency = self.env.company.currency_id

        def shown(number):
            return (
                f"{currency.symbol}\N{NO-BREAK SPACE}{number}"
                if currency.position == "before"
                else f"{number}\N{NO-BREAK SPACE}{currency.symbol}"
            )

        as_manager = self.env["ai.budget"].with_user(self.manager)
        columns = [
            node.get("name")
            for node in etree.fromstring(as_manager.get_views([(False, "list")])["views"]["list"]["arch"]).iter("field")
            if node.get("column_invisible") != "True"
            and node.get("name")
            not in ("name", "scope", "user_id", "group_id", "cloud_service_id", "period", "unit", "company_id")
        ]
        rows = {
            row["name"]: [row[column] for column in columns]
            for row in (money | tokens).with_user(self.manager).read(["name", *columns])
        }
        self.assertEqual(rows["Chat cap"], [shown("0.05"), shown("0.045"), shown("0.005")])
        self.assertEqual(rows["Tokens"], ["150,000 tokens", "18,000 tokens", "132,000 tokens"])
        response, events = self.chat(Turn(text="6.", usage=reported(1)))
        self.assertEqual(events[-1].event, "done", "0.045 of 0.05 is not spent")

    def test_raising_or_lifting_a_spent_budget_lets_the_next_turn_run(self):
        budget = self.budget(0.10)
        self.chat(Turn(text="5.", usage=reported(40_000)))
        response, _events = self.chat()
        self.assertEqual(response.status_code, 402)

        budget.with_user(self.manager).amount = 0.50
        response, events = self.chat(Turn(text="6.", usage=reported(40_000)))
        self.assertEqual(events[-1].event, "done", events[-1].data)

        budget.with_user(self.manager).amount = 0.20
        response, _events = self.chat()
        self.assertEqual(response.status_code, 402)

        budget.with_user(self.manager).action_archive()
        response, events = self.chat(Turn(text="7.", usage=reported(40_000)))
        self.assertEqual(events[-1].event, "done", events[-1].data)
        self.assertEqual(len(self.llm.requests), 3)

    def test_a_new_period_starts_from_nothing(self):
        budget = self.budget(0.10)
        today = {"day": datetime.datetime(2026, 1, 31, 12)}
        with patch("odoo.addons.ai_mcp.turn.budget_charges.budget_now", lambda cr: today["day"]):
            self.chat(Turn(text="5.", usage=reported(40_000)))
            response, _events = self.chat()
            self.assertEqual(response.status_code, 402)
            today["day"] = datetime.datetime(2026, 2, 1, 12)
            response, events = self.chat(Turn(text="6.", usage=reported(20_000)))
            self.assertEqual(events[-1].event, "done", events[-1].data)
            budget.invalidate_recordset()
            self.assertEqual(budget.period_start, datetime.date(2026, 2, 1))
            self.assertAlmostEqual(budget.spent, 0.05)
        self.assertEqual(
            [(p.period_start, p.spent) for p in budget.period_ids.sorted("period_start")],
            [(datetime.date(2026, 1, 1), 0.10), (datetime.date(2026, 2, 1), 0.05)],
        )

    def test_weekly_and_daily_periods_start_on_monday_and_midnight_in_the_company_time_zone(self):
        # Tokyo is UTC+9: 15:00 UTC is midnight there
        self.env.company.partner_id.tz = "Asia/Tokyo"
        clock = {"now": datetime.datetime(2026, 11, 26, 14, 30)}  # Thursday 23:30 in Tokyo
        with patch("odoo.addons.ai_mcp.turn.budget_charges.budget_now", lambda cr: clock["now"]):
            budget = self.budget(0.10, period="day")
            _response, events = self.chat(Turn(text="5.", usage=reported(40_000)))
            self.assertEqual(events[-1].event, "done", events[-1].data)
            response, _events = self.chat()
            self.assertEqual(response.status_code, 402, "the day's budget is spent")

            clock["now"] = datetime.datetime(2026, 11, 26, 15, 30)  # Friday 00:30 in Tokyo, still Thursday in UTC
            _response, events = self.chat(Turn(text="6.", usage=reported(20_000)))
            self.assertEqual(events[-1].event, "done", "a new day began at midnight in Tokyo")
            budget.invalidate_recordset()
            self.assertEqual(budget.period_start, datetime.date(2026, 11, 27))
            self.assertAlmostEqual(budget.spent, 0.05)

            clock["now"] = datetime.datetime(2026, 11, 29, 15, 30)  # Monday 00:30 in Tokyo, Sunday in UTC
            budget.period = "week"
            self.assertEqual(budget.period_start, datetime.date(2026, 11, 30))


@tagged("post_install", "-at_install")
class TestBudgetScopes(BudgetCase):
    def applies(self, budget, user, service=None):
        """Whether a turn of `user` in their company (through `service`) is charged to `budget`."""
        Budget = self.env["ai.budget"]
        return budget in Budget._turn_budgets(user, user.company_id, service or self.env["cloud.service"])

    def test_group_cloud_service_and_company_budgets_apply_to_their_users_only(self):
        sales = self.env["res.groups"].create({"name": "Sales AI"})
        self.user.write({USER_GROUPS: [(4, sales.id)]})
        service, _server = self._other_users_service()
        group_budget = self.budget(1, scope="group", user_id=False, group_id=sales.id)
        service_budget = self.budget(1, scope="cloud_service", user_id=False, cloud_service_id=service.id)
        company_budget = self.budget(1, scope="company", user_id=False)
        other_company = self.env["res.company"].create({"name": "Elsewhere"})
        elsewhere = self.budget(1, scope="company", user_id=False, company_id=other_company.id)
        self.assertTrue(self.applies(group_budget, self.user))
        self.assertFalse(self.applies(group_budget, self.other))
        self.assertTrue(self.applies(service_budget, self.other, service))
        self.assertFalse(self.applies(service_budget, self.other))
        self.assertTrue(self.applies(company_budget, self.user) and self.applies(company_budget, self.other))
        self.assertFalse(self.applies(elsewhere, self.user))

    def test_a_spent_group_budget_refuses_its_members_and_no_one_else(self):
        sales = self.env["res.groups"].create({"name": "Sales AI"})
        self.user.write({USER_GROUPS: [(4, sales.id)]})
        self.budget(0.10, name="Sales team", scope="group", user_id=False, group_id=sales.id)
        self.chat(Turn(text="5.", usage=reported(40_000)))
        response, _events = self.chat()
        self.assertEqual(response.status_code, 402)
        self.assertIn("“Sales team”", response.json()["error"]["message"])
        self.llm.queue(Turn(text="6."))
        self.login(self.other)
        response, events = self.send("hello")
        self.assertEqual(events[-1].event, "done", response.text)

    def test_users_read_the_budgets_that_apply_to_them_and_managers_change_them(self):
        mine = self.budget(1.0)
        theirs = self.budget(1.0, name="Other's cap", user_id=self.other.id)
        self.chat(Turn(text="5.", usage=reported(40_000)))
        as_user = self.env["ai.budget"].with_user(self.user)
        self.assertEqual(as_user.search([]), mine)
        self.assertAlmostEqual(mine.with_user(self.user).remaining, 0.90)
        with self.assertRaises(AccessError):
            theirs.with_user(self.user).read(["name"])
        with self.assertRaises(AccessError):
            mine.with_user(self.user).write({"amount": 100})
        with self.assertRaises(AccessError):
            as_user.create({"name": "Mine now", "scope": "user", "user_id": self.user.id, "amount": 100})
        with self.assertRaises(AccessError):
            mine.with_user(self.user).action_archive()
        mine.invalidate_recordset()
        self.assertEqual(mine.amount, 1.0)
        # a budget of another company is neither theirs nor shown to them, even when it counts everyone there
        elsewhere = self.env["res.company"].create({"name": "Elsewhere"})
        theirs_there = self.budget(1.0, name="Elsewhere's cap", scope="company", user_id=False, company_id=elsewhere.id)
        self.assertNotIn(theirs_there, as_user.search([("scope", "=", "company")]))
        with self.assertRaises(AccessError):
            theirs_there.with_user(self.user).read(["name"])
        as_manager = self.env["ai.budget"].with_user(self.manager)
        created = as_manager.create({"name": "Team", "scope": "company", "amount": 5})
        created.amount = 10
        created.action_archive()
        self.assertEqual(as_manager.search([]), mine | theirs, "a manager of one company sees its budgets")


@tagged("post_install", "-at_install")
class TestBudgetDiscuss(DiscussCase):
    def test_a_spent_budget_is_said_in_the_chat_and_nothing_is_asked_of_the_model(self):
        self.env["ai.budget"].create(
            {"name": "Chat cap", "scope": "user", "user_id": self.user.id, "amount": 0, "unit": "tokens"}
        )
        replies = self.say("hello")
        self.assertEqual(len(replies), 1)
        self.assertRegex(str(replies.body), r"Your monthly AI budget “Chat cap” \(0 tokens\) is spent\.")
        self.assertFalse(self.llm.requests)
