from . import test_hub_in_odoo
from . import test_mcp_server_sync
from . import test_security
from . import test_secrets
from . import test_assistant
