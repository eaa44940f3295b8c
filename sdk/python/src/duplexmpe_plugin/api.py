"""The classes a plugin author subclasses, one per kind, mirroring sdk/sdk.go.

Every kind class is a Plugin, so ``class Tone(Model)`` is a complete plugin class and
``class Speech(TTS, ASR)`` serves two kinds from one process. Methods are called from
gRPC worker threads: calls of different conversations or kinds may run concurrently;
the calls of one conversation never do.
"""

from __future__ import annotations

import abc
from typing import Any, Sequence

import numpy as np

from .types import (
    AnswerQuery,
    Audio,
    Completion,
    CompletionRequest,
    ConfigField,
    ConversationStart,
    Format,
    Info,
    Output,
    SpeechQuery,
    Verdict,
    Voice,
)

KIND_MODEL = "model"
KIND_TTS = "tts"
KIND_ASR = "asr"
KIND_JUDGE = "judge"
KIND_LLM = "llm"


class Plugin:
    """Base of every plugin (sdk.Plugin).

    Set the class attributes, or override describe(). identity() reports what the plugin
    wraps (model id, revision, weights digest, library versions) and is asked again
    after configure(), so it may depend on the config.
    """

    name: str = ""
    version: str = "0.0.0"
    description: str = ""
    capabilities: Sequence[str] = ()
    config: Sequence[ConfigField] = ()

    def describe(self) -> Info:
        return Info(
            name=self.name,
            version=self.version,
            description=self.description,
            capabilities=tuple(self.capabilities),
            config=tuple(self.config),
            identity=dict(self.identity()),
        )

    def identity(self) -> dict[str, str]:
        return {}

    def configure(self, config: dict[str, Any]) -> None:
        """Receives the run file's config block, already checked by the host against
        the schema and with defaults filled in (numbers are floats). Called once, before
        any kind call. Raise InvalidArgument (or ValueError) for a bad value."""


class Conversation(abc.ABC):
    """One conversation in progress (sdk.Conversation).

    Set ``self.format`` before returning from Model.start. step() is called once per
    input frame, in order, never concurrently; it is the only clock the model has.
    """

    format: Format

    @abc.abstractmethod
    def step(self, frame: np.ndarray) -> Output:
        """``frame`` is a float32 array of exactly format.frame_size samples (a copy the
        method may modify). Return the Output for this frame."""

    def close(self) -> None:
        """Releases the conversation's resources; called once, also after errors."""


class Model(Plugin, abc.ABC):
    """A full-duplex speech model driven in lockstep (kind "model")."""

    @abc.abstractmethod
    def start(self, req: ConversationStart) -> Conversation:
        """Begins one conversation with fresh model state."""


class TTS(Plugin, abc.ABC):
    """Speech synthesis (kind "tts")."""

    @abc.abstractmethod
    def voices(self) -> Sequence[Voice]: ...

    @abc.abstractmethod
    def synthesize(self, text: str, voice: str) -> Audio: ...


class ASR(Plugin, abc.ABC):
    """Speech recognition (kind "asr")."""

    @abc.abstractmethod
    def transcribe(self, audio: Audio, language: str) -> str:
        """Returns the text of the clip; ``language`` may be empty (the default)."""


class Judge(Plugin, abc.ABC):
    """Verdicts on transcribed model speech (kind "judge")."""

    @abc.abstractmethod
    def judge_answer(self, q: AnswerQuery) -> Verdict:
        """Labels "correct" or "incorrect"."""

    @abc.abstractmethod
    def classify_speech(self, q: SpeechQuery) -> Verdict:
        """Labels "acknowledgement" or "intrusion"."""


class LLM(Plugin, abc.ABC):
    """Chat completion (kind "llm")."""

    @abc.abstractmethod
    def complete(self, req: CompletionRequest) -> Completion: ...


def kinds_of(plugin: Plugin) -> list[str]:
    """The kinds a plugin object serves, in the protocol's order."""
    kinds = []
    for cls, kind in ((Model, KIND_MODEL), (TTS, KIND_TTS), (ASR, KIND_ASR), (Judge, KIND_JUDGE), (LLM, KIND_LLM)):
        if isinstance(plugin, cls):
            kinds.append(kind)
    return kinds
