"""Translations: every string Odoo extracts from the addon has a zh_CN and a zh_TW translation that
keeps its placeholders, and the translations load (menus, views, Python and JavaScript code)."""

import re

import polib

from odoo.modules.module import get_module_path
from odoo.tests import TransactionCase, tagged
from odoo.tools.translate import TranslationModuleReader, code_translations

from odoo.addons.ai_mcp.exceptions import ChatRefused

LANGS = ("zh_CN", "zh_TW")
PLACEHOLDER = re.compile(r"%\(\w+\)[sd]|%[sd]|\{\{[^}]*\}\}")
# strings Odoo's exporter finds in folders that are no part of the addon (a local virtualenv)
FOREIGN = ("/.venv/", "/node_modules/")


def po_file(lang):
    return polib.pofile(f"{get_module_path('ai_mcp')}/i18n/{lang}.po")


@tagged("post_install", "-at_install")
class TestTranslations(TransactionCase):
    def test_every_extracted_string_is_translated_in_both_languages(self):
        # the reader walks every file under the addon: a local virtualenv's strings are no part of it
        places = {}
        for module, _type, name, _res_id, source, _value, _comments in TranslationModuleReader(
            self.env.cr, modules=["ai_mcp"]
        ):
            if module == "ai_mcp" and source:
                places.setdefault(source, set()).add(name or "")
        extracted = {source for source, names in places.items() if not all(any(f in n for f in FOREIGN) for n in names)}
        self.assertGreater(len(extracted), 300)
        for lang in LANGS:
            with self.subTest(lang=lang):
                translated = {e.msgid: e.msgstr for e in po_file(lang) if e.msgstr}
                missing = sorted(extracted - set(translated))
                self.assertFalse(
                    missing,
                    f"{len(missing)} strings have no {lang} translation in i18n/{lang}.po, e.g. {missing[:5]}: "
                    "export the .pot again (odoo-bin --i18n-export) and translate them",
                )

    def test_translations_keep_placeholders_and_markup(self):
        for lang in LANGS:
            for entry in po_file(lang):
                with self.subTest(lang=lang, msgid=entry.msgid[:60]):
                    self.assertEqual(
                        sorted(PLACEHOLDER.findall(entry.msgid)), sorted(PLACEHOLDER.findall(entry.msgstr))
                    )
                    self.assertEqual(
                        sorted(re.findall(r"<[^>]+>", entry.msgid)), sorted(re.findall(r"<[^>]+>", entry.msgstr))
                    )

    def test_translations_load(self):
        self.env["res.lang"]._activate_lang("zh_TW")
        self.env["res.lang"]._activate_lang("zh_CN")
        self.env["ir.module.module"]._load_module_terms(["ai_mcp"], list(LANGS), overwrite=True)
        config = self.env.ref("ai_mcp.menu_ai_config")
        self.assertEqual(config.with_context(lang="zh_TW").name, "設定")
        self.assertEqual(config.with_context(lang="zh_CN").name, "配置")
        arch = self.env["mcp.server"].with_context(lang="zh_TW").get_views([(False, "form")])["views"]["form"]["arch"]
        self.assertIn("測試連線", arch)
        self.assertIn("已設定", arch)
        # selections built from the services' enums (selections.py) keep their translated labels
        server_fields = self.env["mcp.server"].with_context(lang="zh_TW").fields_get(["auth_type"])
        self.assertEqual(dict(server_fields["auth_type"]["selection"])["bearer"], "Bearer 權杖")
        tool_fields = self.env["mcp.tool"].with_context(lang="zh_TW").fields_get(["visibility"])
        self.assertEqual(dict(tool_fields["visibility"]["selection"])["model"], "僅模型")
        python = code_translations.get_python_translations("ai_mcp", "zh_CN")
        self.assertEqual(python["Connected to %s"], "已连接到 %s")
        web = {m["id"]: m["string"] for m in code_translations.get_web_translations("ai_mcp", "zh_TW")["messages"]}
        self.assertEqual(web["Edit as JSON"], "以 JSON 編輯")
        self.assertEqual(web["Required"], "必填")
        # outside a request (a flow's run, a cron), a refusal is in the language of the user it refuses
        with self.assertNoLogs("odoo.tools.translate", "WARNING"):
            refused = ChatRefused.not_found(self.env(context={"lang": "zh_TW"}))
        self.assertEqual(refused.message, "沒有這個助理、雲端服務或對話，或者您無權使用。")
