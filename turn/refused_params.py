"""What a model record learns of the request fields it refuses, as a turn's events are written."""

from __future__ import annotations

from ..services.events import ModelRefusedParamEvent
from .event_dispatch import records


class RefusedParams:
    """The model records of one run of a turn, taught the fields their model refused."""

    def __init__(self, conversation_id: int) -> None:
        self.conversation_id = conversation_id

    @records(ModelRefusedParamEvent)
    def _model_refused_param(self, env, seq, event):
        # the model record learns it in the turn's transaction: the next turn leaves the parameter out
        provider = env["ai.conversation"].browse(self.conversation_id).assistant_id.provider_id
        if provider:
            provider._learn_refused_param(event.model, event.param, event.message)
