"""In a real browser, an administrator refreshes a provider's models and picks one of the listed
models for an assistant (static/tests/tours/ai_mcp_models_tour.js)."""

from odoo.tests import HttpCase, tagged

from odoo.addons.ai_mcp.testing.scripted_llm import ScriptedLLM

from .common import require_browser


@tagged("post_install", "-at_install")
class TestProviderModelsTour(HttpCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.llm = ScriptedLLM(api_key="sk-models")
        cls.llm.models = ("tour-model-alpha", "tour-model-beta", "tour-model-gamma")
        cls.llm.start()
        cls.addClassCleanup(cls.llm.close)

    def test_an_admin_picks_a_listed_model(self):
        require_browser(self)
        env = self.env(context=dict(self.env.context, tracking_disable=True))
        provider = env["ai.provider"].create(
            {"name": "Models provider", "kind": "compatible", "base_url": self.llm.base_url, "api_key": "sk-models"}
        )
        assistant = env["ai.assistant"].create({"name": "Models assistant", "provider_id": provider.id})
        self.assertFalse(provider.model_ids)

        self.start_tour("/odoo", "ai_mcp_models_tour", login="admin", timeout=120)

        self.assertEqual(len(self.llm.listings), 1)
        self.assertEqual(
            sorted(provider.model_ids.mapped("name")), ["tour-model-alpha", "tour-model-beta", "tour-model-gamma"]
        )
        self.assertEqual(assistant.model_id.name, "tour-model-beta")
        self.assertEqual(assistant.model, "tour-model-beta")
        self.assertEqual(assistant._assistant_settings().llm.model, "tour-model-beta")
