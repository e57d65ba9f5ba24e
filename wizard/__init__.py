from . import mcp_tool_try_wizard
from . import mcp_server_import_line
from . import mcp_server_import_wizard
