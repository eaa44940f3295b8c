from duplexmpe_plugin._proto.duplexmpe.v1 import plugin_pb2 as _plugin_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ListVoicesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Voice(_message.Message):
    __slots__ = ("id", "description", "sample_rate")
    ID_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_RATE_FIELD_NUMBER: _ClassVar[int]
    id: str
    description: str
    sample_rate: int
    def __init__(self, id: _Optional[str] = ..., description: _Optional[str] = ..., sample_rate: _Optional[int] = ...) -> None: ...

class ListVoicesResponse(_message.Message):
    __slots__ = ("voices",)
    VOICES_FIELD_NUMBER: _ClassVar[int]
    voices: _containers.RepeatedCompositeFieldContainer[Voice]
    def __init__(self, voices: _Optional[_Iterable[_Union[Voice, _Mapping]]] = ...) -> None: ...

class SynthesizeRequest(_message.Message):
    __slots__ = ("text", "voice")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    VOICE_FIELD_NUMBER: _ClassVar[int]
    text: str
    voice: str
    def __init__(self, text: _Optional[str] = ..., voice: _Optional[str] = ...) -> None: ...

class SynthesizeResponse(_message.Message):
    __slots__ = ("audio",)
    AUDIO_FIELD_NUMBER: _ClassVar[int]
    audio: _plugin_pb2.Audio
    def __init__(self, audio: _Optional[_Union[_plugin_pb2.Audio, _Mapping]] = ...) -> None: ...

class TranscribeRequest(_message.Message):
    __slots__ = ("audio", "language")
    AUDIO_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    audio: _plugin_pb2.Audio
    language: str
    def __init__(self, audio: _Optional[_Union[_plugin_pb2.Audio, _Mapping]] = ..., language: _Optional[str] = ...) -> None: ...

class TranscribeResponse(_message.Message):
    __slots__ = ("text",)
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class DialogueTurn(_message.Message):
    __slots__ = ("speaker", "text")
    SPEAKER_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    speaker: str
    text: str
    def __init__(self, speaker: _Optional[str] = ..., text: _Optional[str] = ...) -> None: ...

class JudgeAnswerRequest(_message.Message):
    __slots__ = ("context", "request", "gold_answer", "response", "gold_accepted", "answer_type")
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    GOLD_ANSWER_FIELD_NUMBER: _ClassVar[int]
    RESPONSE_FIELD_NUMBER: _ClassVar[int]
    GOLD_ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    ANSWER_TYPE_FIELD_NUMBER: _ClassVar[int]
    context: _containers.RepeatedCompositeFieldContainer[DialogueTurn]
    request: str
    gold_answer: str
    response: str
    gold_accepted: _containers.RepeatedScalarFieldContainer[str]
    answer_type: str
    def __init__(self, context: _Optional[_Iterable[_Union[DialogueTurn, _Mapping]]] = ..., request: _Optional[str] = ..., gold_answer: _Optional[str] = ..., response: _Optional[str] = ..., gold_accepted: _Optional[_Iterable[str]] = ..., answer_type: _Optional[str] = ...) -> None: ...

class ClassifySpeechRequest(_message.Message):
    __slots__ = ("context", "transcript")
    CONTEXT_FIELD_NUMBER: _ClassVar[int]
    TRANSCRIPT_FIELD_NUMBER: _ClassVar[int]
    context: _containers.RepeatedCompositeFieldContainer[DialogueTurn]
    transcript: str
    def __init__(self, context: _Optional[_Iterable[_Union[DialogueTurn, _Mapping]]] = ..., transcript: _Optional[str] = ...) -> None: ...

class Verdict(_message.Message):
    __slots__ = ("label", "parsed", "raw", "rationale")
    LABEL_FIELD_NUMBER: _ClassVar[int]
    PARSED_FIELD_NUMBER: _ClassVar[int]
    RAW_FIELD_NUMBER: _ClassVar[int]
    RATIONALE_FIELD_NUMBER: _ClassVar[int]
    label: str
    parsed: bool
    raw: str
    rationale: str
    def __init__(self, label: _Optional[str] = ..., parsed: _Optional[bool] = ..., raw: _Optional[str] = ..., rationale: _Optional[str] = ...) -> None: ...

class ChatMessage(_message.Message):
    __slots__ = ("role", "content")
    ROLE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    role: str
    content: str
    def __init__(self, role: _Optional[str] = ..., content: _Optional[str] = ...) -> None: ...

class CompleteRequest(_message.Message):
    __slots__ = ("messages", "temperature", "max_tokens", "json", "seed")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    TEMPERATURE_FIELD_NUMBER: _ClassVar[int]
    MAX_TOKENS_FIELD_NUMBER: _ClassVar[int]
    JSON_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[ChatMessage]
    temperature: float
    max_tokens: int
    json: bool
    seed: int
    def __init__(self, messages: _Optional[_Iterable[_Union[ChatMessage, _Mapping]]] = ..., temperature: _Optional[float] = ..., max_tokens: _Optional[int] = ..., json: _Optional[bool] = ..., seed: _Optional[int] = ...) -> None: ...

class CompleteResponse(_message.Message):
    __slots__ = ("content", "model", "prompt_tokens", "completion_tokens", "finish_reason")
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    COMPLETION_TOKENS_FIELD_NUMBER: _ClassVar[int]
    FINISH_REASON_FIELD_NUMBER: _ClassVar[int]
    content: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str
    def __init__(self, content: _Optional[str] = ..., model: _Optional[str] = ..., prompt_tokens: _Optional[int] = ..., completion_tokens: _Optional[int] = ..., finish_reason: _Optional[str] = ...) -> None: ...
