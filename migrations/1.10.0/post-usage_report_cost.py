"""The usage reports add up one currency: each usage row gets its cost in the main company's
currency (ai.usage `report_cost`), at the main company's rate of the day of the call, as the rows
written from now on do (models/ai_usage.py). One statement per currency and day of the rows; a row
already converted is left alone, so running the update again changes nothing."""

import logging
from collections import defaultdict

from odoo import SUPERUSER_ID, api

_logger = logging.getLogger(__name__)


def migrate(cr, version):
    if not version:
        return
    env = api.Environment(cr, SUPERUSER_ID, {})
    cr.execute(
        "SELECT DISTINCT currency_id, date::date FROM ai_usage"
        " WHERE report_currency_id IS NULL AND currency_id IS NOT NULL"
    )
    days = defaultdict(list)
    for currency_id, day in cr.fetchall():
        days[currency_id].append(day)
    Usage, converted = env["ai.usage"], 0
    for currency_id, currency_days in days.items():
        currency = env["res.currency"].browse(currency_id)
        for day in currency_days:
            report_currency, rate = Usage._report_rate(currency, day)
            cr.execute(
                "UPDATE ai_usage SET report_currency_id = %s, report_cost = cost * %s"
                " WHERE report_currency_id IS NULL AND currency_id = %s AND date::date = %s",
                (report_currency.id, rate, currency_id, day),
            )
            converted += cr.rowcount
    _logger.info("ai_mcp: %s usage rows given their cost in the reporting currency", converted)
