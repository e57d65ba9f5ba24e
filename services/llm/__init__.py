"""The model wing: reaching a language model.

The settings a model call is made with, the ChatOpenAI built from them (posting LangChain's payload
as it is), one streamed reply read into text deltas, tool-call pieces and a final ModelReply,
provider failures mapped to LLM_* codes, the one-request provider test, the models a provider
lists (`GET /models`), the presets an administrator picks a provider from, and what a model family
accepts by default. The agent loop (services/loop) drives rounds through this face; Odoo's
provider records build LlmSettings from it.
Provider kinds, model capabilities and the APIs a provider speaks belong here, not in the loop.
"""

from .families import default_capabilities
from .models_list import list_models
from .ping import ping
from .presets import PRESETS, ProviderPreset
from .settings import ApiStyle, LlmSettings, ModelCapabilities, ProviderKind, ReasoningEffort
from .stream import ModelReply, ToolCallDelta, make_chat_model, map_llm_error, stream_reply, with_tools

__all__ = [
    "PRESETS",
    "ApiStyle",
    "LlmSettings",
    "ModelCapabilities",
    "ModelReply",
    "ProviderKind",
    "ProviderPreset",
    "ReasoningEffort",
    "ToolCallDelta",
    "default_capabilities",
    "list_models",
    "make_chat_model",
    "map_llm_error",
    "ping",
    "stream_reply",
    "with_tools",
]
