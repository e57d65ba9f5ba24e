"""The provider form (kinds, presets, the API choice, extra headers and query parameters), the
models a provider lists, what each model accepts, and what it learns when it refuses a parameter."""

import json

from odoo.exceptions import AccessError, ValidationError
from odoo.tests import Form, tagged

from odoo.addons.ai_mcp.services.events import ModelRefusedParamEvent
from odoo.addons.ai_mcp.services.llm import ApiStyle, ProviderKind
from odoo.addons.ai_mcp.testing.llm_providers import OpenAIReasoning, Redirected, VllmWithoutAutoToolChoice
from odoo.addons.ai_mcp.testing.mcp_servers import free_port
from odoo.addons.ai_mcp.testing.scripted_llm import ScriptedLLM, Turn
from odoo.addons.ai_mcp.turn.event_dispatch import EventDispatch
from odoo.addons.ai_mcp.turn.refused_params import RefusedParams

from .common import AiMcpCase

HEADER_VALUE = "org-TOPSECRET-42"
HEADERS = json.dumps({"OpenAI-Organization": HEADER_VALUE})
PROVIDER_FIELDS = ["name", "kind", "extra_headers", "extra_headers_set", "extra_header_names", "api_key"]


@tagged("post_install", "-at_install")
class TestProviderModels(AiMcpCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.Provider = cls.env["ai.provider"]
        cls.Model = cls.env["ai.provider.model"]

    def provider(self, **values):
        return self.Provider.create({"name": "P", "base_url": "https://llm.example.com/v1", **values})

    # -- kinds, presets and the API ----------------------------------------------------------------

    def test_a_preset_fills_the_form_and_every_value_stays_editable(self):
        form = Form(self.Provider.with_user(self.manager))
        form.preset = "ollama"
        self.assertEqual(
            (form.name, form.kind, form.base_url, form.default_model, form.api_style),
            ("Ollama", "compatible", "http://localhost:11434/v1", "llama3.1", "chat_completions"),
        )
        form.preset = "azure"
        self.assertEqual((form.kind, form.api_version, form.lists_models), ("azure", "2024-10-21", False))
        self.assertEqual(form.name, "Ollama", "a name the admin has is kept")
        form.base_url = "https://acme.openai.azure.com"
        form.default_model = "prod-reasoner"
        provider = form.save()
        settings = provider._llm_settings()
        self.assertEqual(
            (settings.kind, settings.api_version, settings.base_url, settings.model),
            (ProviderKind.AZURE, "2024-10-21", "https://acme.openai.azure.com", "prod-reasoner"),
        )

    def test_the_responses_api_is_offered_for_openai_and_azure_only(self):
        form = Form(self.Provider.with_user(self.manager))
        form.preset = "openai"
        form.api_style = "responses"
        provider = form.save()
        self.assertEqual(provider._llm_settings().api, ApiStyle.RESPONSES)
        with Form(provider) as edit:
            edit.kind = "compatible"
            self.assertEqual(edit.api_style, "chat_completions", "changing the kind takes the API back")
        with self.assertRaises(ValidationError) as raised:
            provider.write({"api_style": "responses"})
        self.assertIn("OpenAI and Azure OpenAI only", str(raised.exception))
        self.assertEqual(provider.api_style, "chat_completions")

    def test_an_azure_deployment_url_without_api_version_is_refused_at_save_saying_why(self):
        deployment = "https://acme.openai.azure.com/openai/deployments/prod-gpt4o/chat/completions"
        with self.assertRaises(ValidationError) as raised:
            self.provider(kind="azure", base_url=deployment)
        message = str(raised.exception)
        self.assertIn("Base URL: is an Azure deployment URL, which needs an API version", message)
        self.assertIn("https://RESOURCE.openai.azure.com/openai/v1", message)
        provider = self.provider(kind="azure", base_url=deployment, api_version="2024-10-21")
        with self.assertRaises(ValidationError):
            provider.api_version = False
        # one saved before the check: its test names the URL, not the key
        self.env.cr.execute("UPDATE ai_provider SET api_version = NULL WHERE id = %s", [provider.id])
        provider.invalidate_recordset(["api_version"])
        result = provider.action_test_provider()
        self.assertEqual(result["params"]["type"], "danger")
        self.assertIn("needs an API version", result["params"]["message"])

    def test_no_azure_preset_lists_models(self):
        form = Form(self.Provider.with_user(self.manager))
        form.preset = "azure_v1"
        self.assertEqual((form.kind, bool(form.api_version), form.lists_models), ("azure", False, False))

    def test_an_api_version_only_counts_for_azure(self):
        provider = self.provider(kind="compatible", api_version="2024-10-21")
        self.assertEqual(provider._llm_settings().api_version, "")
        provider.kind = "azure"
        self.assertEqual(provider._llm_settings().api_version, "2024-10-21")

    # -- extra headers and query parameters --------------------------------------------------------

    def test_extra_header_values_are_write_only(self):
        provider = self.provider()
        provider.with_user(self.manager).write({"extra_headers": HEADERS})
        records = provider.with_user(self.manager)
        for data in (
            records.read(PROVIDER_FIELDS),
            records.read(),
            records.web_read({f: {} for f in PROVIDER_FIELDS}),
            records.search_read([("id", "=", provider.id)], PROVIDER_FIELDS),
            records.export_data(PROVIDER_FIELDS),
            records.onchange({}, [], {f: {} for f in PROVIDER_FIELDS}),
            records.web_save({"name": "P2"}, {f: {} for f in PROVIDER_FIELDS}),
        ):
            self.assertNotIn(HEADER_VALUE, json.dumps(data, default=str))
        self.assertEqual(records.read(["extra_headers"])[0]["extra_headers"], False)
        self.assertTrue(provider.extra_headers_set)
        self.assertEqual(provider.extra_header_names, "OpenAI-Organization")
        self.env.flush_all()
        self.env.cr.execute("SELECT extra_headers_secret FROM ai_provider WHERE id = %s", [provider.id])
        self.assertNotIn(HEADER_VALUE, self.env.cr.fetchone()[0])
        self.assertEqual(provider._llm_settings().extra_headers, (("OpenAI-Organization", HEADER_VALUE),))

        provider.write({"extra_headers": ""})
        self.assertTrue(provider.extra_headers_set, "empty keeps the stored headers")
        provider.action_clear_extra_headers()
        self.assertFalse(provider.extra_headers_set)
        self.assertFalse(provider.extra_header_names)
        self.assertEqual(provider._llm_settings().extra_headers, ())

    def test_bad_headers_or_query_are_refused_and_nothing_is_lost(self):
        provider = self.provider(extra_headers=HEADERS, extra_query='{"tenant": "acme"}')
        with self.assertRaises(ValidationError) as raised:
            provider.write({"extra_headers": '{"X-Org": 42}'})
        self.assertIn("JSON object of strings", str(raised.exception))
        with self.assertRaises(ValidationError) as raised:
            provider.write({"extra_query": '["tenant"]'})
        self.assertIn("query parameters", str(raised.exception))
        settings = provider._llm_settings()
        self.assertEqual(settings.extra_headers, (("OpenAI-Organization", HEADER_VALUE),))
        self.assertEqual(settings.extra_query, (("tenant", "acme"),))

    # -- models listed by the provider -------------------------------------------------------------

    def test_refresh_models_lists_what_the_provider_serves(self):
        with ScriptedLLM(api_key="sk-list") as llm:
            llm.models = ("gpt-4o-mini", "o3-mini", "llama3.1")
            provider = self.provider(
                base_url=llm.base_url, api_key="sk-list", extra_headers=HEADERS, extra_query='{"tenant": "acme"}'
            )
            result = provider.with_user(self.manager).action_refresh_models()
            self.assertEqual(result["params"]["type"], "success", result["params"]["message"])
            self.assertIn("3 models listed: 3 new, 0 no longer listed", result["params"]["message"])
            (listing,) = llm.listings
            self.assertEqual(listing["headers"]["openai-organization"], HEADER_VALUE)
            self.assertEqual(listing["query"], {"tenant": "acme"})
            models = {m.name: m for m in provider.model_ids}
            self.assertEqual(sorted(models), ["gpt-4o-mini", "llama3.1", "o3-mini"])
            self.assertTrue(all(m.listed for m in models.values()))
            self.assertFalse(models["o3-mini"].accepts_temperature, "a reasoning model starts without temperature")
            self.assertEqual(models["o3-mini"].max_tokens_param, "max_completion_tokens")
            self.assertTrue(models["gpt-4o-mini"].accepts_temperature)

            # what a model learned survives a refresh; a model no longer listed stays, marked
            models["gpt-4o-mini"].accepts_stream_options = False
            llm.models = ("gpt-4o-mini", "o3-mini", "qwen3")
            result = provider.action_refresh_models()
        self.assertIn("3 models listed: 1 new, 1 no longer listed", result["params"]["message"])
        models = {m.name: m for m in provider.model_ids}
        self.assertEqual(sorted(models), ["gpt-4o-mini", "llama3.1", "o3-mini", "qwen3"])
        self.assertFalse(models["gpt-4o-mini"].accepts_stream_options)
        self.assertFalse(models["llama3.1"].listed)
        self.assertEqual(provider.model_count, 4)

    def test_refresh_models_takes_the_listings_context_length_and_counts_in_words(self):
        with ScriptedLLM() as llm:
            llm.models = ({"id": "openai/gpt-4o-mini", "context_length": 128_000},)
            provider = self.provider(base_url=llm.base_url)
            typed = self.Model.create({"provider_id": provider.id, "name": "mine", "context_window": 8_000})
            result = provider.action_refresh_models()
            self.assertIn("1 model listed: 1 new, 0 no longer listed", result["params"]["message"])
            listed = provider.model_ids.filtered(lambda m: m.name == "openai/gpt-4o-mini")
            self.assertEqual(listed.context_window, 128_000)
            # a window typed in stays, one unknown is filled
            llm.models = ({"id": "mine", "context_length": 32_000}, {"id": "openai/gpt-4o-mini", "context_length": 1})
            listed.context_window = 0
            provider.action_refresh_models()
        self.assertEqual(typed.context_window, 8_000)
        self.assertEqual(listed.context_window, 1)

    def test_a_failed_refresh_says_why_and_changes_nothing(self):
        provider = self.provider(base_url=f"http://127.0.0.1:{free_port()}/v1")
        self.Model.create({"provider_id": provider.id, "name": "kept", "listed": True})
        result = provider.action_refresh_models()
        self.assertEqual(result["params"]["type"], "danger")
        self.assertIn("LLM_UNREACHABLE", result["params"]["message"])
        self.assertEqual(provider.model_ids.mapped("name"), ["kept"])
        self.assertTrue(provider.model_ids.listed)

        for api_version in ("2024-10-21", False):
            azure = self.provider(kind="azure", api_version=api_version)
            result = azure.action_refresh_models()
            self.assertEqual(result["params"]["type"], "danger")
            self.assertIn("type the deployment's name", result["params"]["message"])

    # -- what a turn is given ----------------------------------------------------------------------

    def test_a_turn_gets_what_the_model_record_accepts(self):
        provider = self.provider(default_model="gpt-4o-mini")
        model = self.Model.create({"provider_id": provider.id, "name": "local-reasoner"})
        self.assertTrue(model.accepts_temperature, "an unknown family starts from the plain defaults")
        model.write(
            {
                "accepts_temperature": False,
                "native_tools": False,
                "max_tokens_param": "max_tokens",
                "max_output_tokens": 900,
            }
        )
        assistant = self.env["ai.assistant"].create({"name": "A", "provider_id": provider.id, "model_id": model.id})
        self.assertEqual(assistant.model, "local-reasoner", "the model's name follows the record picked")
        settings = assistant._assistant_settings()
        self.assertEqual(settings.llm.model, "local-reasoner")
        self.assertFalse(settings.llm.capabilities.temperature)
        self.assertEqual(
            (settings.llm.capabilities.max_tokens_param, settings.llm.max_output_tokens), ("max_tokens", 900)
        )
        self.assertTrue(settings.prompted_tools, "a model without native tool calls gets them in the prompt")

        assistant.custom_temperature = False
        self.assertIsNone(assistant._assistant_settings().llm.temperature, "the provider's default")
        assistant.custom_temperature = True
        self.assertEqual(assistant._assistant_settings().llm.temperature, assistant.temperature)

        model.name = "local-reasoner-2"
        self.assertEqual(assistant.model, "local-reasoner-2")

    def test_a_turns_context_window_is_the_models_else_the_providers_fallback(self):
        provider = self.provider(default_model="gpt-4o-mini", fallback_context_window=20_000)
        model = self.Model.create({"provider_id": provider.id, "name": "local-llama", "context_window": 64_000})
        assistant = self.env["ai.assistant"].create({"name": "A", "provider_id": provider.id, "model_id": model.id})
        self.assertEqual(assistant._assistant_settings().llm.context_window, 64_000)
        model.context_window = 0
        self.assertEqual(assistant._assistant_settings().llm.context_window, 20_000, "unknown: the provider's")
        typed = self.env["ai.assistant"].create({"name": "B", "provider_id": provider.id, "model": "no-record"})
        self.assertEqual(typed._assistant_settings().llm.context_window, 20_000)
        self.assertEqual(self.provider().fallback_context_window, 32_000, "the default")
        with self.assertRaises(ValidationError) as raised:
            provider.fallback_context_window = 500
        self.assertIn("between 1000 and 10000000 tokens", str(raised.exception))

    def test_openai_and_mistral_models_take_a_prompt_cache_key_others_learn_it(self):
        openai_provider = self.provider(kind="openai")
        compatible = self.provider(kind="compatible")
        make = self.Model.create
        self.assertTrue(make({"provider_id": openai_provider.id, "name": "gpt-4o"}).accepts_prompt_cache_key)
        self.assertTrue(make({"provider_id": compatible.id, "name": "mistral-large-latest"}).accepts_prompt_cache_key)
        llama = make({"provider_id": compatible.id, "name": "llama3.1"})
        self.assertFalse(llama.accepts_prompt_cache_key)
        self.assertFalse(llama._learn_refused_param("prompt_cache_key", "Extra inputs are not permitted"))
        mistral = compatible._model_named("mistral-large-latest")
        self.assertTrue(mistral._learn_refused_param("prompt_cache_key", "Extra inputs are not permitted"))
        self.assertFalse(mistral.accepts_prompt_cache_key)
        self.assertFalse(compatible._llm_settings(model="mistral-large-latest").capabilities.prompt_cache_key)

    def test_an_assistant_naming_its_model_in_text_works_as_before(self):
        provider = self.provider(default_model="gpt-4o-mini")
        typed = self.env["ai.assistant"].create({"name": "Typed", "provider_id": provider.id, "model": "o3"})
        default = self.env["ai.assistant"].create({"name": "Default", "provider_id": provider.id})
        self.assertEqual(typed._assistant_settings().llm.model, "o3")
        self.assertFalse(typed._assistant_settings().llm.capabilities.temperature, "o3's family defaults")
        self.assertEqual(default._assistant_settings().llm.model, "gpt-4o-mini")
        self.assertEqual(default._assistant_settings().llm.temperature, 0.2)
        self.assertFalse(provider.model_ids, "nothing is made until a model is listed or learns")

    def test_an_assistant_picks_a_model_of_its_own_provider(self):
        provider = self.provider()
        other = self.provider(name="Other")
        mine = self.Model.create({"provider_id": provider.id, "name": "mine"})
        theirs = self.Model.create({"provider_id": other.id, "name": "theirs"})
        assistant = self.env["ai.assistant"].create({"name": "A", "provider_id": provider.id})
        with Form(assistant.with_user(self.manager)) as form:
            form.model_id = mine
            self.assertEqual(form.model, "mine")
        self.assertEqual((assistant.model_id, assistant.model), (mine, "mine"))
        with Form(assistant.with_user(self.manager)) as form:
            form.provider_id = other
            self.assertFalse(form.model_id, "a model of another provider is let go")
            form.model_id = theirs
        with self.assertRaises(ValidationError):
            assistant.write({"provider_id": provider.id})

    def test_provider_test_calls_the_default_model_as_the_record_says(self):
        with ScriptedLLM(api_key="sk-test") as llm:
            provider = self.provider(base_url=llm.base_url, api_key="sk-test", default_model="scripted-model")
            self.Model.create({"provider_id": provider.id, "name": "scripted-model", "accepts_temperature": False})
            assistant = self.env["ai.assistant"].create({"name": "A", "provider_id": provider.id, "temperature": 0.7})
            llm.queue(Turn(text="OK"), Turn(text="OK"))
            result = provider.action_test_provider()
            self.assertEqual(result["params"]["type"], "success", result["params"]["message"])
            self.assertNotIn("temperature", llm.requests[-1])
            self.Model.search([("name", "=", "scripted-model")]).accepts_temperature = True
            result = assistant.action_test_provider()
            self.assertEqual(result["params"]["type"], "success", result["params"]["message"])
            self.assertEqual(llm.requests[-1]["temperature"], 0.7, "the assistant's own parameters")

    def test_a_refusal_during_the_provider_test_is_learned(self):
        with ScriptedLLM(api_key="sk-test", provider=OpenAIReasoning()) as llm:
            provider = self.provider(base_url=llm.base_url, api_key="sk-test", default_model="scripted-model")
            assistant = self.env["ai.assistant"].create({"name": "A", "provider_id": provider.id, "temperature": 0.7})
            llm.queue(Turn(text="OK"))
            result = assistant.action_test_provider()
            self.assertEqual(result["params"]["type"], "success", result["params"]["message"])
            self.assertNotIn("temperature", llm.requests[-1], "asked again without it")
            model = self.Model.search([("provider_id", "=", provider.id), ("name", "=", "scripted-model")])
            self.assertFalse(model.accepts_temperature, "the record learned it")
            self.assertIn("temperature", model.message_ids[0].body)

    def test_the_provider_test_is_green_where_turns_work_and_its_hint_stands_alone(self):
        with ScriptedLLM(provider=VllmWithoutAutoToolChoice()) as llm:
            provider = self.provider(base_url=llm.base_url, default_model="scripted-model")
            assistant = self.env["ai.assistant"].create(
                {"name": "A", "provider_id": provider.id, "prompted_tools": True}
            )
            llm.queue(Turn(text="OK"))
            # its turns put the tools in the prompt: so does its test, and the server answers
            result = assistant.action_test_provider()
            self.assertEqual(result["params"]["type"], "success", result["params"]["message"])
            self.assertNotIn("tools", llm.requests[-1])
            # the provider's own test offers a tool: refused, with what fixes it and nothing else
            result = provider.action_test_provider()
            self.assertEqual(result["params"]["type"], "danger")
            self.assertIn("Tools in the Prompt", result["params"]["message"])
            self.assertNotIn("retry or pick another model", result["params"]["message"])

    def test_the_provider_test_follows_a_redirect_as_a_turn_does(self):
        with ScriptedLLM(provider=Redirected()) as llm:
            provider = self.provider(base_url=llm.base_url, default_model="scripted-model")
            llm.queue(Turn(text="OK"))
            result = provider.action_test_provider()
            self.assertEqual(result["params"]["type"], "success", result["params"]["message"])

    # -- learned refusals ---------------------------------------------------------------------------

    def test_a_refused_parameter_is_learned_and_told_in_the_chatter(self):
        provider = self.provider()
        model = self.Model.create({"provider_id": provider.id, "name": "gpt-4o-mini"})
        before = len(model.message_ids)
        message = "Unsupported parameter: 'stream_options' is not supported with this model."
        self.assertTrue(model._learn_refused_param("stream_options", message))
        self.assertFalse(model.accepts_stream_options)
        self.assertFalse(model._capabilities().stream_options)
        note = model.message_ids[0]
        self.assertIn("stream_options", note.body)
        self.assertIn("is not supported with this model", note.body)
        self.assertIn("Accepts stream_options", note.body)
        self.assertFalse(model._learn_refused_param("stream_options", message), "learned once")
        self.assertFalse(model._learn_refused_param("top_k", "Unknown parameter top_k"), "nothing it controls")
        self.assertEqual(len(model.message_ids), before + 1)

        self.assertTrue(model._learn_refused_param("max_tokens", "Use 'max_completion_tokens' instead."))
        self.assertEqual(model.max_tokens_param, "max_completion_tokens")
        self.assertIn("max_completion_tokens", model.message_ids[0].body)

    def test_a_turns_refusal_teaches_the_model_of_its_assistant(self):
        provider = self.provider()
        assistant = self.env["ai.assistant"].create({"name": "A", "provider_id": provider.id, "model": "proxy-model"})
        conversation = self.env["ai.conversation"].create(
            {"assistant_id": assistant.id, "user_id": self.user1.id, "name": "C"}
        )
        log = EventDispatch(RefusedParams(conversation.id))
        event = ModelRefusedParamEvent(
            model="proxy-model", param="temperature", message="UnsupportedParamsError: ['temperature']"
        )
        stored, change = log.apply(self.env(su=True), 5, event)
        self.assertEqual((stored, change), (event, None))
        model = provider._model_named("proxy-model")
        self.assertTrue(model, "a model typed in the assistant gets its record when it learns")
        self.assertFalse(model.accepts_temperature)
        self.assertIn("UnsupportedParamsError", model.message_ids[0].body)
        self.assertFalse(assistant._assistant_settings().llm.capabilities.temperature, "the next turn leaves it out")

    # -- access -------------------------------------------------------------------------------------

    def test_models_are_for_managers_and_assistants_still_show_theirs(self):
        provider = self.provider()
        model = self.Model.create({"provider_id": provider.id, "name": "gpt-4o-mini"})
        assistant = self.env["ai.assistant"].create({"name": "A", "provider_id": provider.id, "model_id": model.id})
        for user in (self.user1, self.outsider):
            with self.assertRaises(AccessError):
                model.with_user(user).read(["name"])
            with self.assertRaises(AccessError):
                self.Model.with_user(user).create({"provider_id": provider.id, "name": "x"})
            with self.assertRaises(AccessError):
                provider.with_user(user).action_refresh_models()
        data = assistant.with_user(self.user1).web_read({"model_id": {"fields": {"display_name": {}}}, "model": {}})
        self.assertEqual(data[0]["model"], "gpt-4o-mini")
        self.assertEqual(model.with_user(self.manager).read(["name"])[0]["name"], "gpt-4o-mini")
        self.Model.with_user(self.manager).create({"provider_id": provider.id, "name": "typed-in"})
