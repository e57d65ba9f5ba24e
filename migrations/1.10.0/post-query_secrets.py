"""A provider's query parameters become write-only secrets, as its extra headers are (some gateways
take their key in the query): the values kept in clear in the column `extra_query` move, encrypted,
into the secret storage, where the provider keeps sending them; their names stay readable. The
plain column is dropped, and the chatter's tracking of its values, which showed them, is removed."""

import json
import logging

from odoo import SUPERUSER_ID, api

_logger = logging.getLogger(__name__)


def migrate(cr, version):
    cr.execute(
        """
        SELECT 1 FROM information_schema.columns
         WHERE table_name = 'ai_provider' AND column_name = 'extra_query'
        """
    )
    if not cr.fetchone():
        return
    env = api.Environment(cr, SUPERUSER_ID, {})
    Provider = env["ai.provider"]
    cr.execute("SELECT id, extra_query FROM ai_provider WHERE extra_query IS NOT NULL AND btrim(extra_query) <> ''")
    rows = cr.fetchall()
    box = Provider._secret_box() if rows else None
    for provider_id, text in rows:
        try:
            query = json.loads(text)
        except ValueError:
            _logger.warning("ai_mcp: provider %s had query parameters that are not JSON; they are dropped", provider_id)
            continue
        Provider._secret_store(provider_id, "extra_query", box.encrypt(json.dumps(query)))
        cr.execute("UPDATE ai_provider SET extra_query_names = %s WHERE id = %s", (", ".join(query), provider_id))
    cr.execute(
        """
        DELETE FROM mail_tracking_value
         WHERE field_id IN (SELECT id FROM ir_model_fields WHERE model = 'ai.provider' AND name = 'extra_query')
        """
    )
    cr.execute("ALTER TABLE ai_provider DROP COLUMN extra_query")
    _logger.info("ai_mcp: the query parameters of %s providers are write-only secrets now", len(rows))
