"""ai.conversation, one file per aspect (base model first, then its extensions):

- ai_conversation.py: the model itself: its fields, what its model calls cost, who may change it
- access.py: which records a chat request may name (the user's own conversation, usable assistants
  and cloud services), one 404 for the rest
- chat_api.py: what the chat's routes and Discuss ask of it, starting or resuming a turn
- approvals.py: the approvals a paused turn is answered with, and those remembered for the chat
- admission.py: whether a new turn may start now, the checks a start passes before anything is stored
- pace.py: the pace limits, turns a user may start per minute and per hour (a check of admission.py)
- budget.py: a spent AI budget refuses a new turn (a check of admission.py), or an answer to a pause
- claim.py: which turn holds a conversation, and taking over one whose process died
- turn.py: what a turn is given: the history rebuilt from the events, the tools bound for the
  user, the ChatTurn
- call.py: the user's requests about a running tool call (stop it, answer its server's question)
- sampling.py: the user's answer to a running call's sampling request (approve, maybe edited, or decline)
- servers.py: the MCP servers a conversation may use beyond the turn's tools, asked for the user
- prompt.py: the servers' prompts, for the composer's `/` menu
- resource.py: the servers' resources, opened from a link or attached in the composer
- completion.py: the servers' suggestions as the user types a prompt's argument or a template's value
- app.py: the MCP Apps of the conversation's tool calls: their HTML, policy and resources
- app_call.py: the tools an MCP App calls through the chat
- app_context.py: what an app tells the model and says in the user's name
- retention.py: removing the conversations past their company's retention
- subject_chat.py: the record a conversation is about (subject.py), chosen at its start, told to
  the model, shown in the header
- run.py: a turn a server action runs for a record (ai.assistant.run), with nobody to ask
- subject.py: the record a conversation is about (its fields)

and the conversation's own models:

- ai_conversation_approval.py: `ai.conversation.approval`, approvals remembered in a conversation
- ai_conversation_event.py: `ai.conversation.event`, the stored events of its turns
"""

from . import ai_conversation
from . import access
from . import chat_api
from . import approvals
from . import admission
from . import pace
from . import budget
from . import claim
from . import turn
from . import call
from . import sampling
from . import servers
from . import prompt
from . import resource
from . import completion
from . import app
from . import app_call
from . import app_context
from . import ai_conversation_approval
from . import ai_conversation_event
from . import retention
from . import subject_chat
from . import run
from . import subject
