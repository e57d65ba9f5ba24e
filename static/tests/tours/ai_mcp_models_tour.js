/** @odoo-module */
/**
 * An administrator asks a provider for its models (Refresh models), sees them listed in its form,
 * then picks one of them for an assistant from the Model field's list and saves. Run by
 * tests/test_provider_models_tour.py, which points the provider at a scripted LLM listing three models.
 */
import {configMenu, goToApp} from "./app_menu";
import {registry} from "@web/core/registry";

registry.category("web_tour.tours").add("ai_mcp_models_tour", {
    url: "/odoo",
    steps: () => [
        ...goToApp("ai_mcp.menu_ai_root"),

        ...configMenu("menu_ai_provider"),
        {
            trigger: '.o_list_view .o_data_row td.o_data_cell:contains("Models provider")',
            run: "click",
        },
        {trigger: '.o_form_view .o_field_widget[name="kind"]'},
        {
            content: "ask the provider for its models",
            trigger: '.o_form_view button[name="action_refresh_models"]',
            run: "click",
        },
        {trigger: '.o_notification:contains("3 models listed: 3 new, 0 no longer listed")'},
        {
            content: "the models are listed in the provider's form",
            trigger: '.o_field_widget[name="model_ids"] .o_data_row:contains("tour-model-beta")',
        },
        {trigger: '.oe_stat_button[name="action_open_models"]:contains("3")'},

        ...configMenu("menu_ai_assistant"),
        {
            trigger: '.o_list_view .o_data_row td.o_data_cell:contains("Models assistant")',
            run: "click",
        },
        {
            content: "open the Model field's list",
            trigger: '.o_field_widget[name="model_id"] input',
            run: "edit beta",
        },
        {
            content: "pick a model the provider listed",
            trigger: '.o-autocomplete--dropdown-menu .dropdown-item:contains("tour-model-beta")',
            run: "click",
        },
        {trigger: '.o_field_widget[name="model_id"] input:value("tour-model-beta")'},
        {trigger: ".o_form_button_save", run: "click"},
        {trigger: ".o_form_saved"},
    ],
});
