"""A stand-in for the parts of Freeze-Omni (VITA-MLLM/Freeze-Omni, run from a checkout)
that the freeze-omni adapter calls, in numpy. It is NOT Freeze-Omni.

Same call signatures, chunking and state rules as the checkout at commit 3e17af4:
- `VAD()` (web/vad.py): `get_chunk_size()` 2560 (160 ms at 16 kHz), `reset_vad()`,
  `in_dialog`, `predict(float32 chunk)` -> {"status": None | "sl" | "cl" | "el",
  "feature_last_chunk": the 6 cached chunk features on "sl", "feature": this chunk's}.
  The real one runs Silero (threshold 0.8, 2 s minimum silence) and Kaldi fbank; this one
  thresholds the chunk's RMS at 0.02 and ends after 13 quiet chunks (about 2 s).
- `inferencePipeline.speech_dialogue(audio, role=None, stat='sl', past_key_values=None,
  last_id=None, past_tokens=None, adapter_cache=None, encoder_cache=None, pe_index=0)`
  (models/pipeline.py) returns the same dict keys: `stat` 'pre' -> a system-role cache and
  'sl'; with features -> 'cl' (keep listening), 'ss' (start speaking) or 'el'; with None in
  'ss'/'cs' -> one more generated token, `text` (all tokens so far), `hidden_state`,
  `past_tokens`, and 'sl' when the answer is done.
- `post_process(text)`.
- `llm2TTS.run(...)` yields audio segments at 24 kHz (here through `Bridge.synthesize`).

Behaviour (made up): the state head says 'ss' after 3 quiet chunks that follow speech
(unless the role contains "never answer": then 'el'); an answer is 8 to 15 tokens
("w<n>", every 4th followed by "."), one 0.2 s 300 Hz segment per token at 24 kHz.
"""

from __future__ import annotations

import contextlib

import numpy as np

__version__ = "3e17af4-standin"

CHUNK = 2560
OUT_RATE = 24000

_rng = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    global _rng
    _rng = np.random.default_rng(seed)


class VAD:
    def __init__(self, cache_history=10):
        self.CHUNK = CHUNK
        self.cache_history = cache_history
        self.reset_vad()

    def get_chunk_size(self):
        return self.CHUNK

    def reset_vad(self):
        self.history = [[[[0.0, -1.0]]] for _ in range(self.cache_history)]
        self.quiet = 0
        self.in_dialog = False
        self.chunks = 0

    def predict(self, audio):
        audio = np.asarray(audio, dtype=np.float32).reshape(-1)
        if audio.shape[0] != CHUNK:
            raise ValueError(f"VAD.predict expects {CHUNK} samples, got {audio.shape[0]}")
        rms = float(np.sqrt(np.mean(audio.astype(np.float64) ** 2)))
        feature = [[[rms, float(self.chunks)]]]
        self.chunks += 1
        out = {"status": None}
        if self.in_dialog:
            self.quiet = self.quiet + 1 if rms < 0.02 else 0
            out["status"] = "el" if self.quiet >= 13 else "cl"
            if out["status"] == "el":
                self.quiet = 0
        else:
            if rms >= 0.02:
                out["status"] = "sl"
                self.in_dialog = True
                self.quiet = 0
            else:
                self.history = self.history[1:] + [feature]
        if out["status"] == "sl":
            out["feature_last_chunk"] = [h for h in self.history[-6:]]
            out["feature"] = feature
        elif out["status"] in ("cl", "el"):
            out["feature_last_chunk"] = None
            out["feature"] = feature
        return out


class inferencePipeline:  # noqa: N801 - mirrors models.pipeline.inferencePipeline
    def __init__(self, args):
        self.args = args

    def speech_dialogue(self, audio, role=None, stat="sl", past_key_values=None, last_id=None, past_tokens=None,
                        adapter_cache=None, encoder_cache=None, pe_index=0):
        if stat == "pre":
            return dict(past_key_values={"role": role or "", "heard": [], "quiet": 0, "answer_left": 0},
                        stat="sl", last_id=None, adapter_cache=None, encoder_cache=None, pe_index=0)
        cache = past_key_values
        if cache is None:
            raise ValueError("speech_dialogue without a system role cache (call with stat='pre' first)")
        out = dict(past_key_values=cache, stat=stat, last_id=last_id, adapter_cache=adapter_cache,
                   encoder_cache=encoder_cache, pe_index=pe_index)
        if audio is not None:
            rms = float(np.asarray(audio).reshape(-1)[0])
            cache["heard"].append(rms)
            cache["quiet"] = cache["quiet"] + 1 if rms < 0.02 else 0
            spoke = any(h >= 0.02 for h in cache["heard"])
            out["stat"] = "cl"
            if spoke and cache["quiet"] >= 3:
                out["stat"] = "el" if "never answer" in cache["role"] else "ss"
            out["pe_index"] = pe_index + 1
            return out
        if stat not in ("ss", "cs"):
            raise ValueError(f"speech_dialogue(None) in state {stat!r}")
        if stat == "ss":
            cache["answer_left"] = int(_rng.integers(8, 16))
            past_tokens = []
        if cache["answer_left"] == 0:
            out["stat"] = "sl"
            out["past_tokens"] = past_tokens
            return out
        cache["answer_left"] -= 1
        past_tokens = list(past_tokens or []) + [int(_rng.integers(0, 1000))]
        words = []
        for i, t in enumerate(past_tokens):
            words.append(f" w{t}" + ("." if i % 4 == 3 else ""))
        out.update(stat="cs", last_id=[[past_tokens[-1]]], past_tokens=past_tokens, text="".join(words),
                   hidden_state=np.full((1, 1, 4), float(past_tokens[-1]), dtype=np.float32))
        return out

    def post_process(self, text):
        return text.strip()


class llm2TTS:  # noqa: N801 - mirrors models.decoder.llm2tts.llm2TTS
    def __init__(self, model_path):
        self.model_path = model_path

    def run(self, n_tokens, first_pack):
        t = np.arange(int(0.2 * OUT_RATE)) / OUT_RATE
        tone = (0.3 * np.sin(2 * np.pi * 300 * t)).astype(np.float32)
        for i in range(n_tokens):
            if first_pack and i == 0:
                yield np.concatenate([np.zeros(240, np.float32), tone])  # leading near-silence, trimmed by the server
            else:
                yield tone.copy()


class Bridge:
    """The numpy side of the adapter's bridge (the real one wraps torch and the TTS call)."""

    def seed(self, seed: int) -> None:
        manual_seed(seed)

    def no_grad(self):
        return contextlib.nullcontext()

    def feature(self, feature):
        return np.asarray(feature, dtype=np.float32)

    def synthesize(self, runtime, hidden_states, text, generate_num):
        n = len(hidden_states)
        return list(runtime["tts"].run(n, generate_num == 0))


def load(config: dict) -> dict:
    pipeline = inferencePipeline(config)
    return {
        "vad": VAD(),
        "pipeline": pipeline,
        "tts": llm2TTS("standin"),
        "bridge": Bridge(),
        "identity": {"library": "standin_freezeomni " + __version__, "checkpoint": "standin", "llm": "standin"},
    }
