from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DescribeRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class DescribeResponse(_message.Message):
    __slots__ = ("name", "version", "kinds", "protocol_version", "capabilities", "config_schema", "identity", "description")
    class IdentityEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    CAPABILITIES_FIELD_NUMBER: _ClassVar[int]
    CONFIG_SCHEMA_FIELD_NUMBER: _ClassVar[int]
    IDENTITY_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    name: str
    version: str
    kinds: _containers.RepeatedScalarFieldContainer[str]
    protocol_version: int
    capabilities: _containers.RepeatedScalarFieldContainer[str]
    config_schema: _containers.RepeatedCompositeFieldContainer[ConfigField]
    identity: _containers.ScalarMap[str, str]
    description: str
    def __init__(self, name: _Optional[str] = ..., version: _Optional[str] = ..., kinds: _Optional[_Iterable[str]] = ..., protocol_version: _Optional[int] = ..., capabilities: _Optional[_Iterable[str]] = ..., config_schema: _Optional[_Iterable[_Union[ConfigField, _Mapping]]] = ..., identity: _Optional[_Mapping[str, str]] = ..., description: _Optional[str] = ...) -> None: ...

class ConfigField(_message.Message):
    __slots__ = ("name", "type", "required", "default_json", "description", "allowed", "transport")
    NAME_FIELD_NUMBER: _ClassVar[int]
    TYPE_FIELD_NUMBER: _ClassVar[int]
    REQUIRED_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_JSON_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    ALLOWED_FIELD_NUMBER: _ClassVar[int]
    TRANSPORT_FIELD_NUMBER: _ClassVar[int]
    name: str
    type: str
    required: bool
    default_json: str
    description: str
    allowed: _containers.RepeatedScalarFieldContainer[str]
    transport: bool
    def __init__(self, name: _Optional[str] = ..., type: _Optional[str] = ..., required: _Optional[bool] = ..., default_json: _Optional[str] = ..., description: _Optional[str] = ..., allowed: _Optional[_Iterable[str]] = ..., transport: _Optional[bool] = ...) -> None: ...

class ConfigureRequest(_message.Message):
    __slots__ = ("config_json",)
    CONFIG_JSON_FIELD_NUMBER: _ClassVar[int]
    config_json: str
    def __init__(self, config_json: _Optional[str] = ...) -> None: ...

class ConfigureResponse(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Audio(_message.Message):
    __slots__ = ("pcm", "sample_rate")
    PCM_FIELD_NUMBER: _ClassVar[int]
    SAMPLE_RATE_FIELD_NUMBER: _ClassVar[int]
    pcm: bytes
    sample_rate: int
    def __init__(self, pcm: _Optional[bytes] = ..., sample_rate: _Optional[int] = ...) -> None: ...
