"""migrations/1.8.0/pre-migrate.py on a table without the kind column, as a database made before
provider kinds has it: each provider gets the kind its base URL says, before Odoo would give every one
the default of new providers (OpenAI)."""

from odoo.tests import TransactionCase, tagged

from .migration_script import migration_module


def migrate(cr):
    migration_module("1.8.0", "pre-migrate").migrate(cr, "1.7.0")


@tagged("post_install", "-at_install")
class TestProviderKindMigration(TransactionCase):
    def test_providers_made_before_kinds_get_the_kind_of_their_url(self):
        urls = {
            "OpenAI": "https://api.openai.com/v1",
            "Azure": "https://contoso.openai.azure.com/openai/v1",
            "Ollama": "http://localhost:11434/v1",
            "Look-alike": "https://api.openai.com.example.net/v1",
            "Gateway": "https://gateway.example.com/openai.azure.com/v1",
        }
        Provider = self.env["ai.provider"].with_context(tracking_disable=True)
        ids = {
            name: Provider.create({"name": name, "base_url": url, "api_key": "sk-x"}).id for name, url in urls.items()
        }
        self.env.flush_all()
        # the table as a version before kinds left it (undone with the test's transaction)
        self.env.cr.execute("ALTER TABLE ai_provider DROP COLUMN kind")

        migrate(self.env.cr)

        self.env.cr.execute("SELECT id, kind FROM ai_provider WHERE id = ANY(%s)", (list(ids.values()),))
        kinds = dict(self.env.cr.fetchall())
        self.assertEqual(
            {name: kinds[provider_id] for name, provider_id in ids.items()},
            {
                "OpenAI": "openai",
                "Azure": "azure",
                "Ollama": "compatible",
                "Look-alike": "compatible",
                "Gateway": "compatible",
            },
        )
        self.env.invalidate_all()

    def test_a_database_that_has_kinds_keeps_them(self):
        provider = self.env["ai.provider"].create(
            {"name": "Chosen", "base_url": "http://localhost:11434/v1", "api_key": "sk-x", "kind": "openai"}
        )
        self.env.flush_all()
        migrate(self.env.cr)
        self.env.invalidate_all()
        self.assertEqual(provider.kind, "openai", "the update does not classify a provider that has its kind")
