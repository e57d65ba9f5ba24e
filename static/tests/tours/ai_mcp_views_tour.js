/** @odoo-module */
/**
 * Opens every screen of the AI app the way an administrator does: the list and a form of
 * providers, assistants, MCP servers, MCP tools and cloud services, then the Try-it wizard of a
 * real tool, filled through the form generated from its input schema, and called. Run by
 * tests/test_ui_tour.py, which creates the records (and a real MCP server) first.
 */
import {configMenu, goToApp} from "./app_menu";
import {registry} from "@web/core/registry";

function openRow(text, check) {
    return [
        {trigger: `.o_list_view .o_data_row td.o_data_cell:contains("${text}")`, run: "click"},
        {trigger: `.o_form_view ${check}`},
    ];
}

registry.category("web_tour.tours").add("ai_mcp_views_tour", {
    url: "/odoo",
    steps: () => [
        ...goToApp("ai_mcp.menu_ai_root"),

        // providers
        ...configMenu("menu_ai_provider"),
        ...openRow("Tour provider", '.o_field_widget[name="base_url"]'),
        {trigger: '.o_form_view .badge:contains("Set")'},
        {trigger: ".o_form_view .o-mail-Chatter"},

        // assistants
        ...configMenu("menu_ai_assistant"),
        ...openRow("Tour assistant", '.o_field_widget[name="provider_id"]'),
        {trigger: '.o_notebook a:contains("Tools")', run: "click"},
        {trigger: '.o_field_widget[name="tool_preview"]:contains("Tour server / add")'},

        // servers
        ...configMenu("menu_mcp_server"),
        ...openRow(
            "Tour server",
            '.o_statusbar_status button[aria-checked="true"]:contains("Connected")'
        ),
        {trigger: '.o_form_view .o_field_widget[name="url"]'},
        {trigger: '.o_form_view button[name="action_test_connection"]'},
        {trigger: '.o_form_view button[name="action_sync_tools"]'},
        {trigger: '.o_form_view .oe_stat_button[name="action_open_tools"]', run: "click"},
        {trigger: '.o_list_view .o_data_row td.o_data_cell:contains("echo")'},

        // tools: the list, a form, and Try it
        ...configMenu("menu_mcp_tool"),
        {trigger: ".o_list_view .o_field_boolean_toggle"},
        ...openRow("add", '.o_field_widget[name="description"]:contains("Add two numbers")'),
        {trigger: '.o_notebook a:contains("Input schema")', run: "click"},
        {trigger: '.o_field_widget[name="input_schema_pretty"] .ace_editor:contains("required")'},
        {trigger: '.o_form_view button[name="action_try"]', run: "click"},
        {trigger: '.modal .o_ai_mcp_schema_form [data-path="a"] .o_schema_form_required'},
        {
            content: "an invalid number shows its error next to the input",
            trigger: '.modal .o_ai_mcp_schema_form [data-path="a"] input',
            run: "edit two",
        },
        {trigger: '.modal [data-path="a"] .o_schema_form_error'},
        {trigger: '.modal .o_ai_mcp_schema_form [data-path="a"] input', run: "edit 2"},
        {trigger: '.modal .o_ai_mcp_schema_form [data-path="b"] input', run: "edit 3.5"},
        {trigger: ".modal .o_ai_mcp_schema_form:not(:has(.o_schema_form_error))"},
        {trigger: '.modal-footer button[name="action_call"]', run: "click"},
        {trigger: '.modal .o_field_widget[name="result_html"]:contains("5.5")'},
        {trigger: '.modal [data-path="a"] input:value(2)'},
        {trigger: '.modal-footer button.btn-secondary:contains("Close")', run: "click"},
        {trigger: "body:not(:has(.modal))"},

        // Try it on a tool whose schema has every kind of input
        ...configMenu("menu_mcp_tool"),
        ...openRow("rich_form", '.o_field_widget[name="description"]'),
        {trigger: '.o_form_view button[name="action_try"]', run: "click"},
        {trigger: '.modal [data-path="query"] input', run: "edit tea"},
        {trigger: '.modal [data-path="mode"] select', run: "select 1"},
        {trigger: '.modal [data-path="verbose"] select', run: "select true"},
        {trigger: '.modal [data-path="limit"] input[placeholder="Default: 10"]'},
        {
            content: "an optional group is left out until included",
            trigger: '.modal [data-path="filters"] .form-check-label:contains("Include")',
        },
        {trigger: '.modal [data-path="filters"] input.o_schema_form_send', run: "click"},
        {trigger: '.modal [data-path="filters/tag"] input', run: "edit green"},
        {trigger: '.modal [data-path="filters/since"] input.o_schema_form_null', run: "click"},
        {trigger: '.modal [data-path="ids"] button.o_schema_form_add', run: "click"},
        {trigger: '.modal [data-path="ids/0"] input', run: "edit 7"},
        {trigger: '.modal [data-path="ids"] button.o_schema_form_add', run: "click"},
        {trigger: '.modal [data-path="ids/1"] input', run: "edit 7.5"},
        {trigger: '.modal [data-path="ids/1"] .o_schema_form_error'},
        {trigger: '.modal [data-path="ids/1"] input', run: "edit 8"},
        {trigger: ".modal .o_ai_mcp_schema_form:not(:has(.o_schema_form_error))"},
        {trigger: ".modal button.o_schema_form_mode", run: "click"},
        {trigger: ".modal textarea.o_schema_form_json", run: "edit {"},
        {trigger: ".modal .o_ai_mcp_schema_form .invalid-feedback"},
        {trigger: ".modal button.o_schema_form_mode", run: "click"},
        {trigger: ".modal .o_ai_mcp_schema_form:not(:has(.invalid-feedback))"},
        {trigger: '.modal [data-path="ids/1"] input'},
        {trigger: '.modal-footer button[name="action_call"]', run: "click"},
        {trigger: '.modal .alert-danger:contains("MCP_")'},
        {trigger: '.modal-footer button.btn-secondary:contains("Close")', run: "click"},
        {trigger: "body:not(:has(.modal))"},

        // a tool without arguments that returns an image: shown from its data URI
        ...configMenu("menu_mcp_tool"),
        ...openRow("image", '.o_field_widget[name="description"]:contains("A tiny PNG")'),
        {trigger: '.o_form_view button[name="action_try"]', run: "click"},
        {trigger: '.modal .o_ai_mcp_schema_form:contains("This tool takes no arguments.")'},
        {trigger: '.modal-footer button[name="action_call"]', run: "click"},
        {trigger: '.modal .o_field_widget[name="result_html"] img[src^="data:image/png;base64,"]'},
        {trigger: '.modal-footer button.btn-secondary:contains("Close")', run: "click"},
        {trigger: "body:not(:has(.modal))"},

        // cloud services
        {
            trigger:
                'a[data-menu-xmlid="ai_mcp.menu_cloud_service"], button[data-menu-xmlid="ai_mcp.menu_cloud_service"]',
            run: "click",
        },
        ...openRow("Tour service", '.o_field_widget[name="owner_id"]'),
        {trigger: '.o_field_widget[name="user_mcp_server_ids"]'},

        // import wizard
        ...configMenu("menu_mcp_server_import"),
        {
            trigger: '.modal .o_field_widget[name="config_text"] textarea',
            run: 'edit {"mcpServers": {"tour_import": {"url": "https://tour.example.com/mcp"}, "bad": {}}}',
        },
        {trigger: '.modal-footer button[name="action_preview"]', run: "click"},
        {trigger: '.modal .o_data_row:contains("tour_import"):contains("Ready")'},
        {trigger: '.modal .o_data_row:contains("bad"):contains("Cannot be imported")'},
        {trigger: '.modal-footer button.btn-secondary:contains("Close")', run: "click"},
        {trigger: "body:not(:has(.modal))"},
    ],
});
