"""Providers get a kind (OpenAI, Azure OpenAI, OpenAI-compatible).

A provider made before kinds existed is classified from its base URL, before Odoo adds the column
with the default of new providers (OpenAI), so a local Ollama is not called an OpenAI provider.
Every kind calls the same URL with the same key as before: an Azure provider without an API version
is Azure's v1 URL, the only one that worked before.
"""

import logging

_logger = logging.getLogger(__name__)


def migrate(cr, version):
    cr.execute("SELECT 1 FROM information_schema.columns WHERE table_name = 'ai_provider' AND column_name = 'kind'")
    if cr.fetchone():
        return
    cr.execute("ALTER TABLE ai_provider ADD COLUMN kind varchar")
    cr.execute(
        r"""
        UPDATE ai_provider
           SET kind = CASE
                WHEN base_url ~* '^https://api\.openai\.com(/|$)' THEN 'openai'
                WHEN base_url ~* '^https://[^/]+\.openai\.azure\.com(/|$)' THEN 'azure'
                ELSE 'compatible'
           END
        RETURNING id, kind
        """
    )
    _logger.info("ai_mcp: providers classified by their base URL: %s", dict(cr.fetchall()))
