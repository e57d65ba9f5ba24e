"""mcp.server, one file per aspect (base model first, then its extensions):

- mcp_server.py: the model itself: connection settings, scope and owner, timeouts, state
- app.py: what its MCP Apps may do (shown at all, the browser powers an app is granted)
- sampling.py: whether its server may ask the assistant's model for a completion (sampling)
- spec.py: the spec the hub connects with, built with the secrets decrypted
- sync.py: connecting, recording the outcome, and syncing its mcp.tool records
- skills.py: the skills it publishes, as mcp.skill records, and whether they are offered
- oauth.py: signing in with OAuth: settings, sign-in and sign-out, the grants a turn calls with
- oauth_dpop.py: the DPoP option of the OAuth sign-in (tokens bound to a key of each grant)
- oauth_workload.py: signing in with the deployment's workload identity (JWT bearer grant)
- oauth_enterprise.py: each user signed in through the company's identity provider (ID-JAG)
- list_watch.py: a server that announces a changed tool list is synced again in the background
- odoo_source.py: "This Odoo", the built-in tool source: its catalogue as its tools, no connection

and the server's own models:

- mcp_oauth_token.py: `mcp.oauth.token`, its OAuth grants (per user or shared)
- mcp_oauth_pending.py: `mcp.oauth.pending`, sign-ins waiting for their callback
- mcp_server_preset.py: `mcp.server.preset`, the catalog of well-known servers, and the preset
  a server was created from
"""

from . import mcp_server
from . import app
from . import sampling
from . import spec
from . import sync
from . import skills
from . import oauth
from . import oauth_dpop
from . import oauth_workload
from . import oauth_enterprise
from . import mcp_oauth_token
from . import mcp_oauth_pending
from . import mcp_server_preset
from . import list_watch
from . import odoo_source
