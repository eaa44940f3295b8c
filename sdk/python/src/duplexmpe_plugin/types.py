"""Plain values exchanged between plugin code and the SDK, mirroring sdk/sdk.go."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

import numpy as np

# Config field types (sdk.TypeString, ...).
TYPE_STRING = "string"
TYPE_NUMBER = "number"
TYPE_BOOL = "bool"
TYPE_LIST_STRING = "list(string)"
TYPE_LIST_NUMBER = "list(number)"
TYPE_MAP_STRING = "map(string)"
# A string naming a file or directory: the host resolves a relative value against the
# run file's directory before configure(), so the plugin gets a path that works from its
# own working directory.
TYPE_PATH = "path"
CONFIG_TYPES = (TYPE_STRING, TYPE_NUMBER, TYPE_BOOL, TYPE_LIST_STRING, TYPE_LIST_NUMBER, TYPE_MAP_STRING, TYPE_PATH)

# Capabilities a plugin may declare in its ``capabilities`` tuple (sdk.CapText, ...):
# optional features of the contract, which the host uses only when they are declared.
# The model emits a text channel (Output.text), which the host records.
CAP_TEXT = "model.text"
# The model honours ConversationStart.instruction; the host refuses to send an
# instruction to a model that does not declare it.
CAP_INSTRUCTION = "model.instruction"
# The prefix by which a model says how many conversations it can play at once; write
# cap_concurrency(4) for "model.concurrency=4".
CAP_CONCURRENCY = "model.concurrency="


def cap_concurrency(n: int) -> str:
    """The capability of a model that can play n conversations at once (n >= 1)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"cap_concurrency: want a whole number of conversations >= 1, got {n!r}")
    return f"{CAP_CONCURRENCY}{n}"


# Verdict labels (sdk.LabelCorrect, ...).
LABEL_CORRECT = "correct"
LABEL_INCORRECT = "incorrect"
LABEL_ACKNOWLEDGEMENT = "acknowledgement"
LABEL_INTRUSION = "intrusion"


@dataclass(frozen=True)
class ConfigField:
    """One attribute of the plugin's config block (sdk.ConfigField).

    ``default`` is a JSON-compatible value or None; ``allowed`` restricts a string field
    to the listed values when non-empty. ``transport`` marks how to reach or pace a
    service (a URL, retries, timeouts, concurrency) rather than what it computes: the host
    leaves such fields out of item keys and run manifests (sdk.ConfigField.Transport).
    """

    name: str
    type: str
    required: bool = False
    default: Any = None
    description: str = ""
    allowed: Sequence[str] = ()
    transport: bool = False


@dataclass
class Info:
    """What a plugin says about itself (sdk.Info). The SDK fills in kinds and the
    protocol version from what the plugin class implements."""

    name: str
    version: str
    description: str = ""
    capabilities: Sequence[str] = ()
    config: Sequence[ConfigField] = ()
    identity: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ConversationStart:
    id: str
    seed: int = 0
    instruction: str = ""


@dataclass(frozen=True)
class Format:
    """What a model declares for a conversation: sample rates in Hz and the number of
    input samples in every frame."""

    input_rate: int
    output_rate: int
    frame_size: int


@dataclass
class Output:
    """A model's reply to one input frame. ``samples`` (mono float32 at the output rate,
    any 1-D array-like) may be empty; ``flush`` discards queued, unplayed audio first."""

    samples: Any = None
    text: str = ""
    flush: bool = False


@dataclass(frozen=True)
class Voice:
    id: str
    description: str = ""
    rate: int = 0


@dataclass
class Audio:
    """A mono clip: float32 samples in [-1, 1] (1-D numpy array) and its rate in Hz."""

    samples: np.ndarray
    rate: int


@dataclass(frozen=True)
class DialogueTurn:
    speaker: str
    text: str


@dataclass(frozen=True)
class AnswerQuery:
    context: Sequence[DialogueTurn]
    request: str
    gold_answer: str
    response: str
    # Other ways of saying the gold answer that count as correct (the scenario's
    # gold_accepted); empty for most scenarios.
    gold_accepted: Sequence[str] = ()
    # What kind of answer the gold is ("number", "money", "duration", "clock_time", "date",
    # "name", "yes_no", "code", "text"; the scenario's answer_type); "" when unstated.
    answer_type: str = ""


@dataclass(frozen=True)
class SpeechQuery:
    context: Sequence[DialogueTurn]
    transcript: str


@dataclass
class Verdict:
    """A judge's answer. ``parsed`` is False when the judge's output could not be
    parsed; the host then counts the verdict as a failure."""

    label: str
    parsed: bool
    raw: str = ""
    rationale: str = ""


@dataclass(frozen=True)
class ChatMessage:
    role: str  # "system", "user", "assistant"
    content: str


@dataclass(frozen=True)
class CompletionRequest:
    messages: Sequence[ChatMessage]
    temperature: Optional[float] = None  # None: the plugin's default
    max_tokens: int = 0
    json: bool = False  # ask for a JSON object as the whole reply
    seed: Optional[int] = None


@dataclass
class Completion:
    content: str
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = ""
