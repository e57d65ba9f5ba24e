"""The states a conversation and its messages go through: one definition for the models' selection
fields, the turn's writer and the SQL that reads or sets them."""


class ConversationState:
    IDLE = "idle"
    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting_approval"
    AWAITING_CONFIRMATION = "awaiting_confirmation"
    AWAITING_AUTH = "awaiting_auth"

    # waiting for the user's answer to a question of the turn (approve, go on, sign in)
    PAUSED = (AWAITING_APPROVAL, AWAITING_CONFIRMATION, AWAITING_AUTH)


class MessageStatus:
    """The status of a tool call's message."""

    PENDING = "pending"  # waits for the user's approval or sign-in
    RUNNING = "running"
    CANCELLING = "cancelling"  # the user asked to stop it; the turn has not seen it stopped yet
    DONE = "done"
    ERROR = "error"
    DENIED = "denied"
    CANCELLED = "cancelled"

    # not finished: a turn that ends leaves none of them behind
    OPEN = (RUNNING, PENDING, CANCELLING)
