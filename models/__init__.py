from . import ai_secret_mixin
from . import cloud_service
from . import mcp_server
from . import mcp_tool
from . import ai_provider
from . import ai_assistant
