from . import chat
from . import hub_stats
