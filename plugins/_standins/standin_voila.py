"""A stand-in for Voila-autonomous (maitrix-org/Voila, run from a checkout) at the level the
voila adapter drives it, in numpy. It is NOT Voila.

- `Tokenizer` mirrors voila_tokenizer.VoilaTokenizer: `sampling_rate` 16000,
  `encode(wav, sr)` -> int codes [K, T] with T = len // 640 (25 tokens per second, SEG_LEN
  640), `decode(codes [K, T])` -> float32 [T * 640]. Like HF Encodec it keeps no state
  between calls; code 0 of a token is the level of its 640 samples (0..1023).
- `Runner` has the adapter's runner interface (VoilaRunner in voila_adapter.py is the torch
  one that calls VoilaAutonomousModel): `start(instruction)`, `propose()` -> the model's
  next token row (K token ids) and whether it is an audio row, and `commit(user_row)`,
  which appends [user K | model K] to the sequence, as run_generate does. Audio rows
  carry ids min_audio_token_id + n * codebook_size + code, as the real model's do.
- Sampling draws from one global generator seeded by `manual_seed`.

Behaviour (made up): the model emits silent audio rows (code 0) while listening. After
loud user tokens (code 0 above 100) followed by 3 quiet ones it says: the assistant
marker, 2 text tokens, 6 to 11 loud audio rows, then the end-of-sequence token. With an
instruction containing "never speak" it only listens. `propose()` may be called again
without `commit()` and returns the same row (the pending row waits for user input).
"""

from __future__ import annotations

import contextlib

import numpy as np

__version__ = "6ba63bf-standin"

K = 4
CODEBOOK = 1024
MIN_AUDIO_ID = 5000
AUDIO_TOKEN_ID = 7
ASSISTANT_ID = 8
EOS_ID = 2
SEG_LEN = 640

_rng = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    global _rng
    _rng = np.random.default_rng(seed)


class Tokenizer:
    sampling_rate = 16000

    def encode(self, wav, sr):
        wav = np.asarray(wav, dtype=np.float32).reshape(-1)
        if sr != 16000:
            raise ValueError("the stand-in encodes 16 kHz input only (the real one resamples)")
        T = len(wav) // SEG_LEN
        codes = np.zeros((K, T), dtype=np.int64)
        for t in range(T):
            seg = wav[t * SEG_LEN:(t + 1) * SEG_LEN].astype(np.float64)
            codes[0, t] = min(int(np.sqrt(np.mean(seg ** 2)) * 4 * CODEBOOK), CODEBOOK - 1)
        return codes

    def decode(self, codes):
        codes = np.asarray(codes)
        assert codes.ndim == 2, "decode expects [K, T]"
        T = codes.shape[1]
        t = np.arange(T * SEG_LEN) / self.sampling_rate
        amp = np.repeat(codes[0] / (CODEBOOK - 1) * 0.5, SEG_LEN)
        return (amp * np.sin(2 * np.pi * 250 * t)).astype(np.float32)


class Runner:
    num_codebooks = K
    codebook_size = CODEBOOK
    min_audio_token_id = MIN_AUDIO_ID
    max_audio_token_id = MIN_AUDIO_ID + K * CODEBOOK - 1
    eos_token_id = EOS_ID

    def start(self, instruction: str = "") -> None:
        self.instruction = instruction
        self.rows = []
        self.heard = False
        self.quiet = 0
        self.plan = []
        self.pending = None
        self.starts = getattr(self, "starts", 0) + 1

    def _audio_row(self, code):
        return np.array([MIN_AUDIO_ID + n * CODEBOOK + (code if n == 0 else 0) for n in range(K)], dtype=np.int64)

    def propose(self):
        if self.pending is not None:
            return self.pending
        if self.plan:
            kind, value = self.plan.pop(0)
        else:
            kind, value = "audio", 0
        row = self._audio_row(value) if kind == "audio" else np.full(K, value, dtype=np.int64)
        self.pending = (row, kind == "audio")
        return self.pending

    def commit(self, user_row):
        row, is_audio = self.pending
        if is_audio:
            if user_row is None:
                raise ValueError("an audio row needs the user's tokens")
            level = int(user_row[0]) - MIN_AUDIO_ID
            if level > 100:
                self.heard, self.quiet = True, 0
            elif self.heard and not self.plan:
                self.quiet += 1
                if self.quiet >= 3 and "never speak" not in self.instruction:
                    self.heard = False
                    n = int(_rng.integers(6, 12))
                    self.plan = ([("text", ASSISTANT_ID)] + [("text", int(_rng.integers(20, 200))) for _ in range(2)]
                                 + [("audio", 900)] * n + [("text", EOS_ID)])
            self.rows.append(np.concatenate([user_row, row]))
        else:
            self.rows.append(np.concatenate([row, row]))
        self.pending = None


class TextTokenizer:
    def decode(self, ids, skip_special_tokens=True):
        return "".join(f" t{i}" for i in ids if i not in (EOS_ID, ASSISTANT_ID))


class Ops:
    def seed(self, seed: int) -> None:
        manual_seed(seed)

    def no_grad(self):
        return contextlib.nullcontext()


def load(config: dict) -> dict:
    return {
        "runner": Runner(),
        "audio_tokenizer": Tokenizer(),
        "text_tokenizer": TextTokenizer(),
        "ops": Ops(),
        "identity": {"library": "standin_voila " + __version__, "checkpoint": "standin", "revision": "none"},
    }
