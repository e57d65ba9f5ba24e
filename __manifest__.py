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
        "data/ir_config_parameter.xml",
        "data/ir_cron.xml",
    ],
    "application": True,
    "installable": True,
}
