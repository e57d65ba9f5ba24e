from . import chat
from . import hub_stats
from . import oauth
from . import app
from . import sampling
