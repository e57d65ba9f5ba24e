"""The model wing: reaching a language model.

The settings a model call is made with (and the defaults of known model families), the chat model
built from them (ChatOpenAI, or AzureChatOpenAI for Azure's classic URL, posting LangChain's payload
as it is, with what the model accepts and what the provider needs back), one streamed reply read
into text deltas, reasoning, tool-call pieces and a final ModelReply, provider failures mapped to
LLM_* codes (a refused parameter named, a request longer than the model reads), the provider test,
the models a provider lists (`GET /models`) and the presets an administrator picks a provider from. The agent loop
(services/loop) drives rounds through this face; Odoo's provider records build LlmSettings from it.
Provider kinds, model capabilities and the APIs a provider speaks belong here, not in the loop.
"""

from .chat_model import REPLAY, TOOL_CALL_REPLAY, capabilities_without, make_chat_model
from .families import default_capabilities
from .models_list import ListedModel, list_models
from .ping import ping
from .presets import PRESETS, ProviderPreset
from .prompt_cache import prompt_cache_key
from .provider_errors import ContextExceeded, ParamRefused, map_llm_error
from .settings import ApiStyle, LlmSettings, ModelCapabilities, ProviderKind, ReasoningEffort, check_azure_url
from .stream import ModelReply, Thinking, ToolCallDelta, stream_reply, with_tools

__all__ = [
    "PRESETS",
    "REPLAY",
    "TOOL_CALL_REPLAY",
    "ApiStyle",
    "ContextExceeded",
    "ListedModel",
    "LlmSettings",
    "ModelCapabilities",
    "ModelReply",
    "ParamRefused",
    "ProviderKind",
    "ProviderPreset",
    "ReasoningEffort",
    "Thinking",
    "ToolCallDelta",
    "capabilities_without",
    "check_azure_url",
    "default_capabilities",
    "list_models",
    "make_chat_model",
    "map_llm_error",
    "ping",
    "prompt_cache_key",
    "stream_reply",
    "with_tools",
]
