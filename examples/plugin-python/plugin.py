"""speaker: a small duplexmpe model plugin in Python that answers with speech.

It listens for loud input (a frame whose RMS reaches `threshold`); when the room has been
quiet for `pause_ms` after it, it says one sentence, spoken by Debian's flite, and it
stops as soon as someone talks over it. It is a stand-in for a real full-duplex model: it
shows the lockstep protocol (one reply per 80 ms input frame), a config schema, identity,
and logging. Its answers are speech, so the harness's VAD hears them and they score as
responses, intrusions and yields would (a tone would score exactly like silence).
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import tempfile
import wave

import numpy as np

from duplexmpe_plugin import (
    TYPE_NUMBER,
    TYPE_STRING,
    ConfigField,
    Conversation,
    ConversationStart,
    FailedPrecondition,
    Format,
    InvalidArgument,
    Model,
    Output,
    serve,
)

RATE = 16000
FRAME = 1280  # 80 ms at 16 kHz
VOICE = "slt"  # a 16 kHz flite voice
DEFAULT_ANSWER = "I heard you. I am an example plugin, not a real model."

log = logging.getLogger("speaker")


def say(text: str) -> tuple[np.ndarray, str]:
    """Speak text with flite; return float32 samples at RATE and flite's version line."""
    flite = shutil.which("flite")
    if flite is None:
        raise FailedPrecondition("flite is not installed: install the Debian package flite "
                                 "(the repository's scripts/install-apt.sh does)")
    with tempfile.TemporaryDirectory(prefix="speaker-") as tmp:
        path = os.path.join(tmp, "answer.wav")
        done = subprocess.run([flite, "-voice", VOICE, "-t", text, "-o", path],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise FailedPrecondition(f"flite could not say the answer: {done.stderr.strip()}")
        with wave.open(path, "rb") as w:
            if w.getsampwidth() != 2 or w.getnchannels() != 1:
                raise FailedPrecondition("flite wrote something other than 16-bit mono PCM")
            rate = w.getframerate()
            pcm = np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768
    if rate != RATE:  # linear interpolation is enough for an example
        t = np.arange(int(len(pcm) * RATE / rate)) / RATE
        pcm = np.interp(t, np.arange(len(pcm)) / rate, pcm).astype(np.float32)
    # flite --version prints its version and exits 1; the output is what matters.
    out = subprocess.run([flite, "--version"], capture_output=True, text=True, check=False)
    lines = [ln.split("version:", 1)[1].strip() for ln in (out.stdout + out.stderr).splitlines() if "version:" in ln]
    return pcm, lines[0] if lines else "unknown"


class Speaker(Model):
    name = "speaker"
    version = "0.2.0"
    description = "Says one sentence (flite) when the room goes quiet after speech; stops when talked over."
    # Each conversation keeps its own state (SpeakerConversation) and only reads the shared
    # answer, so several can play at once; a model holding one GPU state would say 1.
    capabilities = ("model.text", "model.concurrency=4")
    config = (
        ConfigField("threshold", TYPE_NUMBER, default=0.05,
                    description="RMS level (0..1) at which an input frame counts as loud."),
        ConfigField("pause_ms", TYPE_NUMBER, default=1000.0,
                    description="Quiet time after loud input before it answers, in ms."),
        ConfigField("answer", TYPE_STRING, default=DEFAULT_ANSWER, description="The sentence it says."),
    )

    def __init__(self) -> None:
        self.threshold = 0.05
        self.pause_ms = 1000.0
        self.answer = DEFAULT_ANSWER
        self.speech: np.ndarray | None = None
        self.flite = ""

    def configure(self, config: dict) -> None:
        threshold = float(config.get("threshold", 0.05))
        pause_ms = float(config.get("pause_ms", 1000.0))
        answer = config.get("answer", DEFAULT_ANSWER)
        if not 0 < threshold <= 1:
            raise InvalidArgument(f"threshold = {threshold}: want a level in (0, 1]")
        if not 80 <= pause_ms <= 10000:
            raise InvalidArgument(f"pause_ms = {pause_ms}: want 80 to 10000 ms")
        if not isinstance(answer, str) or not answer.strip():
            raise InvalidArgument(f"answer = {answer!r}: want a sentence to say")
        speech, flite = say(answer)
        self.threshold, self.pause_ms, self.answer, self.speech, self.flite = threshold, pause_ms, answer, speech, flite
        log.info("configured", extra={"threshold": threshold, "pause_ms": pause_ms,
                                      "answer_s": round(len(speech) / RATE, 2)})

    def identity(self) -> dict[str, str]:
        return {"model": "speaker-example", "answer": self.answer, "voice": f"flite {VOICE}",
                "flite": self.flite, "pause_ms": f"{self.pause_ms:g}", "threshold": f"{self.threshold:g}",
                "numpy": np.__version__}

    def start(self, req: ConversationStart) -> Conversation:
        if self.speech is None:  # a host that reattaches may not configure: use the defaults
            self.configure({})
        pause_frames = int(np.ceil(self.pause_ms / 1000 * RATE / FRAME))
        return SpeakerConversation(self.threshold, pause_frames, self.speech)


class SpeakerConversation(Conversation):
    format = Format(input_rate=RATE, output_rate=RATE, frame_size=FRAME)

    def __init__(self, threshold: float, pause_frames: int, speech: np.ndarray) -> None:
        self.threshold = threshold
        self.pause_frames = pause_frames
        self.speech = speech
        self.heard = False  # loud input since the last answer
        self.quiet = 0  # quiet frames since the last loud one
        self.pos = -1  # position in the answer while speaking, -1 when silent

    def step(self, frame: np.ndarray) -> Output:
        if float(np.sqrt(np.mean(frame * frame))) >= self.threshold:
            self.heard, self.quiet = True, 0
            if self.pos >= 0:  # talked over: stop now, dropping what is queued
                self.pos = -1
                return Output(flush=True)
            return Output()
        self.quiet += 1
        if self.pos < 0 and self.heard and self.quiet >= self.pause_frames:
            self.heard, self.pos = False, 0
        if self.pos < 0:
            return Output()
        chunk = self.speech[self.pos:self.pos + FRAME]  # real time: one frame of audio per frame
        text = "answer" if self.pos == 0 else ""
        self.pos += FRAME
        if self.pos >= len(self.speech):
            self.pos = -1
        return Output(samples=chunk, text=text)


if __name__ == "__main__":
    serve(Speaker())
