from . import chat
