from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ModelInput(_message.Message):
    __slots__ = ("start", "frame", "end")
    START_FIELD_NUMBER: _ClassVar[int]
    FRAME_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    start: ConversationStart
    frame: InputFrame
    end: ConversationEnd
    def __init__(self, start: _Optional[_Union[ConversationStart, _Mapping]] = ..., frame: _Optional[_Union[InputFrame, _Mapping]] = ..., end: _Optional[_Union[ConversationEnd, _Mapping]] = ...) -> None: ...

class ConversationStart(_message.Message):
    __slots__ = ("conversation_id", "seed", "instruction")
    CONVERSATION_ID_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    INSTRUCTION_FIELD_NUMBER: _ClassVar[int]
    conversation_id: str
    seed: int
    instruction: str
    def __init__(self, conversation_id: _Optional[str] = ..., seed: _Optional[int] = ..., instruction: _Optional[str] = ...) -> None: ...

class InputFrame(_message.Message):
    __slots__ = ("index", "pcm")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    PCM_FIELD_NUMBER: _ClassVar[int]
    index: int
    pcm: bytes
    def __init__(self, index: _Optional[int] = ..., pcm: _Optional[bytes] = ...) -> None: ...

class ConversationEnd(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ModelOutput(_message.Message):
    __slots__ = ("ready", "frame")
    READY_FIELD_NUMBER: _ClassVar[int]
    FRAME_FIELD_NUMBER: _ClassVar[int]
    ready: ModelReady
    frame: OutputFrame
    def __init__(self, ready: _Optional[_Union[ModelReady, _Mapping]] = ..., frame: _Optional[_Union[OutputFrame, _Mapping]] = ...) -> None: ...

class ModelReady(_message.Message):
    __slots__ = ("input_rate", "output_rate", "frame_size")
    INPUT_RATE_FIELD_NUMBER: _ClassVar[int]
    OUTPUT_RATE_FIELD_NUMBER: _ClassVar[int]
    FRAME_SIZE_FIELD_NUMBER: _ClassVar[int]
    input_rate: int
    output_rate: int
    frame_size: int
    def __init__(self, input_rate: _Optional[int] = ..., output_rate: _Optional[int] = ..., frame_size: _Optional[int] = ...) -> None: ...

class OutputFrame(_message.Message):
    __slots__ = ("index", "pcm", "text", "flush")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    PCM_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    FLUSH_FIELD_NUMBER: _ClassVar[int]
    index: int
    pcm: bytes
    text: str
    flush: bool
    def __init__(self, index: _Optional[int] = ..., pcm: _Optional[bytes] = ..., text: _Optional[str] = ..., flush: _Optional[bool] = ...) -> None: ...
