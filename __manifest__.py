{
    "name": "AI Assistant with MCP tools",
    "version": "18.0.1.0.0",
    "category": "Productivity",
    "summary": "Chat with an AI assistant that calls tools served by MCP (Model Context Protocol) servers",
    "author": "ai_mcp contributors",
    "license": "LGPL-3",
    "depends": ["mail"],
    # PyPI distribution names: Odoo 18 looks them up with importlib.metadata.version(), which
    # normalises "-" and "_"; install them with requirements.txt.
    "external_dependencies": {
        "python": [
            "mcp",
            "langchain-openai",
            "langchain-mcp-adapters",
            "httpx",
            "pydantic",
            "jsonschema",
            "cryptography",
        ],
    },
    "data": [
        "security/ai_mcp_groups.xml",
        "security/ir.model.access.csv",
        "security/ai_mcp_rules.xml",
        "security/ai_mcp_chat_rules.xml",
        "data/ir_config_parameter.xml",
        "data/ir_cron.xml",
        "views/ai_provider_views.xml",
        "views/ai_assistant_views.xml",
        "views/mcp_server_views.xml",
        "views/mcp_tool_views.xml",
        "views/cloud_service_views.xml",
        "views/mcp_tool_try_wizard_views.xml",
        "views/mcp_server_import_wizard_views.xml",
        "views/ai_mcp_menus.xml",
        "views/ai_chat_views.xml",
    ],
    "assets": {
        "web.assets_backend": [
            "ai_mcp/static/src/core/schema_form_model.js",
            "ai_mcp/static/src/schema_form/*",
            "ai_mcp/static/src/core/chat_state.js",
            "ai_mcp/static/src/core/chat_view.js",
            "ai_mcp/static/src/core/event_stream.js",
            "ai_mcp/static/src/core/markdown.js",
            "ai_mcp/static/src/core/sse_parser.js",
            "ai_mcp/static/src/chat/**/*",
        ],
        "web.assets_tests": [
            "ai_mcp/static/tests/tours/*",
        ],
    },
    "demo": [
        "data/ai_mcp_demo.xml",
    ],
    "application": True,
    "installable": True,
}
