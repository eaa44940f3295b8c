"""Write duplexmpe plugins in Python.

A plugin is a class that subclasses one or more kinds (Model, TTS, ASR, Judge, LLM);
``serve(plugin)`` runs it as a go-plugin process that the duplexmpe host starts::

    from duplexmpe_plugin import Model, Conversation, Format, Output, serve

    class Silent(Model):
        name = "silent"
        version = "0.1.0"

        def start(self, req):
            return Quiet()

    class Quiet(Conversation):
        format = Format(input_rate=16000, output_rate=16000, frame_size=1280)

        def step(self, frame):
            return Output()

    if __name__ == "__main__":
        serve(Silent())
"""

from . import hostwatch

# Started first, before grpc and the plugin's own (perhaps minutes-long) loading: a plugin
# outlives its host by no more than the time the kernel takes to close a pipe.
hostwatch.start()

from .api import ASR, LLM, TTS, Conversation, Judge, Model, Plugin
from .errors import FailedPrecondition, InvalidArgument, PluginError
from .handshake import MAGIC_COOKIE_KEY, MAGIC_COOKIE_VALUE, PROTOCOL_VERSION
from .server import MAX_MESSAGE_BYTES, serve
from .types import (
    CAP_CONCURRENCY,
    CAP_INSTRUCTION,
    CAP_TEXT,
    LABEL_ACKNOWLEDGEMENT,
    LABEL_CORRECT,
    LABEL_INCORRECT,
    LABEL_INTRUSION,
    TYPE_BOOL,
    TYPE_LIST_NUMBER,
    TYPE_LIST_STRING,
    TYPE_MAP_STRING,
    TYPE_NUMBER,
    TYPE_PATH,
    TYPE_STRING,
    AnswerQuery,
    Audio,
    ChatMessage,
    Completion,
    CompletionRequest,
    ConfigField,
    ConversationStart,
    DialogueTurn,
    Format,
    Info,
    Output,
    SpeechQuery,
    Verdict,
    Voice,
    cap_concurrency,
)

__version__ = "0.1.0"

__all__ = [
    "ASR", "LLM", "TTS", "Conversation", "Judge", "Model", "Plugin",
    "FailedPrecondition", "InvalidArgument", "PluginError",
    "MAGIC_COOKIE_KEY", "MAGIC_COOKIE_VALUE", "PROTOCOL_VERSION", "MAX_MESSAGE_BYTES", "serve",
    "CAP_CONCURRENCY", "CAP_INSTRUCTION", "CAP_TEXT", "cap_concurrency",
    "LABEL_ACKNOWLEDGEMENT", "LABEL_CORRECT", "LABEL_INCORRECT", "LABEL_INTRUSION",
    "TYPE_BOOL", "TYPE_LIST_NUMBER", "TYPE_LIST_STRING", "TYPE_MAP_STRING", "TYPE_NUMBER", "TYPE_PATH", "TYPE_STRING",
    "AnswerQuery", "Audio", "ChatMessage", "Completion", "CompletionRequest", "ConfigField",
    "ConversationStart", "DialogueTurn", "Format", "Info", "Output", "SpeechQuery", "Verdict", "Voice",
]
