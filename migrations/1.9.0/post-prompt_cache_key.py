"""Models known before "Accepts prompt_cache_key" existed take it from their family, as a model
listed now does: on for OpenAI's and Azure's models and Mistral's own, off for the others (a new
column would leave it off for all). Nothing else changes: the providers' new "Context Window When
Unknown" is filled with its default by the update itself."""

import logging

from odoo.addons.ai_mcp.services.llm import ProviderKind, default_capabilities

_logger = logging.getLogger(__name__)


def migrate(cr, version):
    cr.execute(
        """
        SELECT model.id, model.name, provider.kind
          FROM ai_provider_model model
          JOIN ai_provider provider ON provider.id = model.provider_id
        """
    )
    taking = [
        model_id
        for model_id, name, kind in cr.fetchall()
        if default_capabilities(name or "", ProviderKind(kind or ProviderKind.COMPATIBLE)).prompt_cache_key
    ]
    if taking:
        cr.execute("UPDATE ai_provider_model SET accepts_prompt_cache_key = TRUE WHERE id = ANY(%s)", (taking,))
    _logger.info("ai_mcp: %s models take prompt_cache_key from their family", len(taking))
