"""beep: a minimal duplexmpe model plugin in Python.

It stays silent until it hears loud input (a frame whose RMS reaches `threshold`), waits
for the input to go quiet again, and then answers with a short sine tone. It is a
stand-in for a real full-duplex model: it shows the lockstep protocol (one reply per
80 ms input frame), a config schema, identity, and logging.
"""

from __future__ import annotations

import logging

import numpy as np

from duplexmpe_plugin import (
    TYPE_NUMBER,
    ConfigField,
    Conversation,
    ConversationStart,
    Format,
    InvalidArgument,
    Model,
    Output,
    serve,
)

RATE = 16000
FRAME = 1280  # 80 ms at 16 kHz

log = logging.getLogger("beep")


class Beep(Model):
    name = "beep"
    version = "0.1.0"
    description = "Silent until it hears loud input, then answers with a short tone."
    capabilities = ("model.text",)
    config = (
        ConfigField("threshold", TYPE_NUMBER, default=0.05,
                    description="RMS level (0..1) at which an input frame counts as loud."),
        ConfigField("tone_hz", TYPE_NUMBER, default=440.0, description="Pitch of the answer tone in Hz."),
        ConfigField("tone_ms", TYPE_NUMBER, default=400.0, description="Length of the answer tone in ms."),
    )

    def __init__(self) -> None:
        self.threshold = 0.05
        self.tone_hz = 440.0
        self.tone_ms = 400.0

    def configure(self, config: dict) -> None:
        threshold = float(config.get("threshold", self.threshold))
        tone_hz = float(config.get("tone_hz", self.tone_hz))
        tone_ms = float(config.get("tone_ms", self.tone_ms))
        if not 0 < threshold <= 1:
            raise InvalidArgument(f"threshold = {threshold}: want a level in (0, 1]")
        if not 20 <= tone_hz <= RATE / 2:
            raise InvalidArgument(f"tone_hz = {tone_hz}: want 20 to {RATE // 2} Hz")
        if not 0 < tone_ms <= 10000:
            raise InvalidArgument(f"tone_ms = {tone_ms}: want 1 to 10000 ms")
        self.threshold, self.tone_hz, self.tone_ms = threshold, tone_hz, tone_ms
        log.info("configured", extra={"threshold": threshold, "tone_hz": tone_hz, "tone_ms": tone_ms})

    def identity(self) -> dict[str, str]:
        return {"model": "beep-example", "tone": f"{self.tone_hz:g} Hz, {self.tone_ms:g} ms",
                "numpy": np.__version__}

    def start(self, req: ConversationStart) -> Conversation:
        n = int(RATE * self.tone_ms / 1000)
        t = np.arange(n, dtype=np.float32) / RATE
        tone = (0.3 * np.sin(2 * np.pi * self.tone_hz * t)).astype(np.float32)
        return BeepConversation(self.threshold, tone)


class BeepConversation(Conversation):
    format = Format(input_rate=RATE, output_rate=RATE, frame_size=FRAME)

    def __init__(self, threshold: float, tone: np.ndarray) -> None:
        self.threshold = threshold
        self.tone = tone
        self.heard = False  # loud input seen, not answered yet
        self.pos = -1  # position in the tone while answering, -1 when silent

    def step(self, frame: np.ndarray) -> Output:
        loud = float(np.sqrt(np.mean(frame * frame))) >= self.threshold
        if self.pos < 0:
            if loud:
                self.heard = True
                return Output()
            if not self.heard:
                return Output()
            # The speaker stopped: answer.
            self.heard, self.pos = False, 0
        chunk = self.tone[self.pos:self.pos + FRAME]
        text = "beep" if self.pos == 0 else ""
        self.pos += FRAME
        if self.pos >= len(self.tone):
            self.pos = -1
        return Output(samples=chunk, text=text)


if __name__ == "__main__":
    serve(Beep())
