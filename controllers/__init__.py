from . import chat
from . import hub_stats
from . import oauth
from . import identity_provider
from . import app
from . import sampling
