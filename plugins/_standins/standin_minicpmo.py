"""A stand-in for MiniCPM-o 4.5's duplex API (transformers remote code of
openbmb/MiniCPM-o-4_5, `MiniCPMODuplex` in OpenBMB/MiniCPM-o-Demo MiniCPMO45/modeling_minicpmo.py),
in numpy, so the minicpm-o adapter is tested where torch is not installed.

It is NOT MiniCPM-o. It keeps the call signatures, units, rates and state rules:

- `AutoModel.from_pretrained(name, trust_remote_code=True, attn_implementation=..., torch_dtype=...,
  init_vision=..., init_audio=..., init_tts=..., revision=...)`, then `.eval()`, `.to(device)`,
  `.init_tts()`, `.as_duplex()`.
- `prepare(prefix_system_prompt=None, suffix_system_prompt=None, ref_audio=None,
  prompt_wav_path=None)` resets the streaming state (a new conversation).
- `streaming_prefill(audio_waveform=<float32 16 kHz>, frame_list=None, ...)` buffers audio;
  the first unit needs 1035 ms (shorter input is zero-padded at the front, as the real
  code does), later units 1000 ms. Returns {"success": False, ...} when not enough audio.
- `streaming_generate(prompt_wav_path=None, max_new_speak_tokens_per_chunk=20,
  decode_mode="sampling", temperature=0.7, top_k=20, top_p=0.8, listen_prob_scale=1.0, ...)`
  returns {"is_listen", "text", "audio_waveform" (float32 at 24 kHz: 1 s of zeros when
  listening, as `_generate_silence_waveform`), "end_of_turn", "current_time"}.
- Sampling draws from one global generator seeded by `manual_seed`, as torch's is.

Behaviour (made up): after a unit whose RMS is above 0.05 followed by a quiet unit, it
speaks for 2 to 4 units (drawn from the generator), a 220 Hz tone of 24000 samples per unit
and text "w<n> "; the last speaking unit has end_of_turn. If the system prompt contains
"stay silent", it never speaks.
"""

from __future__ import annotations

import contextlib

import numpy as np

__version__ = "4.5-standin"

SAMPLE_RATE = 16000
OUT_RATE = 24000
CHUNK_MS = 1000
FIRST_CHUNK_MS = 1035

_rng = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    global _rng
    _rng = np.random.default_rng(seed)


class Duplex:
    def __init__(self, model: "Model"):
        self.model = model
        self.prepared = False
        self.prepare_calls = []
        self._reset_streaming_state()

    def _reset_streaming_state(self):
        self.audio_buffer = np.array([], dtype=np.float32)
        self.audio_chunk_idx = 0
        self.pending = False
        self.heard = False
        self.speak_left = 0
        self.words = 0

    def prepare(self, prefix_system_prompt=None, suffix_system_prompt=None, ref_audio=None,
                prompt_wav_path=None, context_previous_marker="\n\nprevious: "):
        if ref_audio is not None and (not isinstance(ref_audio, np.ndarray) or ref_audio.ndim != 1):
            raise ValueError("ref_audio must be a 1-D float32 array at 16 kHz")
        self._reset_streaming_state()
        self.prepared = True
        self.prompt = (prefix_system_prompt or "") + (suffix_system_prompt or "")
        self.prepare_calls.append({"prefix": prefix_system_prompt, "suffix": suffix_system_prompt,
                                   "ref_audio_len": None if ref_audio is None else len(ref_audio),
                                   "prompt_wav_path": prompt_wav_path})
        return self.prompt

    def streaming_prefill(self, audio_waveform=None, frame_list=None, text_list=None, max_slice_nums=1,
                          batch_vision_feed=False):
        if not self.prepared:
            raise RuntimeError("streaming_prefill before prepare()")
        if audio_waveform is None:
            return {"success": False, "reason": "no audio"}
        if not isinstance(audio_waveform, np.ndarray) or audio_waveform.dtype != np.float32 or audio_waveform.ndim != 1:
            raise ValueError("audio_waveform must be a 1-D float32 numpy array at 16 kHz")
        self.audio_buffer = np.concatenate([self.audio_buffer, audio_waveform])
        if self.audio_chunk_idx == 0:
            need = FIRST_CHUNK_MS * SAMPLE_RATE // 1000
            if len(self.audio_buffer) < need:
                self.audio_buffer = np.concatenate([np.zeros(need - len(self.audio_buffer), np.float32), self.audio_buffer])
        else:
            need = CHUNK_MS * SAMPLE_RATE // 1000
        if len(self.audio_buffer) < need:
            return {"success": False, "reason": f"audio not enough: need {need} samples, only {len(self.audio_buffer)}"}
        unit, self.audio_buffer = self.audio_buffer[:need], self.audio_buffer[need:]
        self.last_rms = float(np.sqrt(np.mean(unit.astype(np.float64) ** 2)))
        self.audio_chunk_idx += 1
        self.pending = True
        return {"success": True}

    def streaming_generate(self, prompt_wav_path=None, max_new_speak_tokens_per_chunk=20, decode_mode="sampling",
                           temperature=0.7, top_k=20, top_p=0.8, listen_prob_scale=1.0, listen_top_k=None,
                           text_repetition_penalty=1.05, text_repetition_window_size=512):
        silence = {"is_listen": True, "text": "", "audio_waveform": np.zeros(OUT_RATE, np.float32),
                   "end_of_turn": False, "current_time": self.audio_chunk_idx}
        if not self.pending:
            return silence
        self.pending = False
        if self.speak_left == 0 and "stay silent" not in self.prompt:
            if self.last_rms > 0.05:
                self.heard = True
            elif self.heard:
                self.heard = False
                self.speak_left = int(_rng.integers(2, 5))
        if self.speak_left == 0:
            return silence
        self.speak_left -= 1
        t = np.arange(OUT_RATE) / OUT_RATE
        words = " ".join(f"w{int(_rng.integers(0, 1000))}" for _ in range(3)) + " "
        return {"is_listen": False, "text": words,
                "audio_waveform": (0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32),
                "end_of_turn": self.speak_left == 0, "current_time": self.audio_chunk_idx}


class Model:
    def __init__(self, name, kwargs):
        self.name_or_path = name
        self.kwargs = kwargs
        self.tts_ready = False
        self.device = "cpu"

    def eval(self):
        return self

    def to(self, device):
        self.device = device
        return self

    def init_tts(self, **kwargs):
        self.tts_ready = True

    def as_duplex(self, **kwargs):
        if not self.tts_ready:
            raise RuntimeError("init_tts() first")
        return Duplex(self)


class AutoModel:
    @staticmethod
    def from_pretrained(name, **kwargs):
        if not kwargs.get("trust_remote_code"):
            raise ValueError("MiniCPM-o needs trust_remote_code=True")
        return Model(name, kwargs)


class Ops:
    def seed(self, seed: int) -> None:
        manual_seed(seed)

    def to_numpy(self, x) -> np.ndarray:
        return np.asarray(x, dtype=np.float32).reshape(-1)

    def no_grad(self):
        return contextlib.nullcontext()


def load(config: dict) -> dict:
    model = AutoModel.from_pretrained(config.get("checkpoint", "standin"), trust_remote_code=True,
                                      attn_implementation=config.get("attn_implementation", "sdpa"),
                                      init_vision=False, init_audio=True, init_tts=True).eval()
    model.init_tts()
    return {"duplex": model.as_duplex(), "ops": Ops(), "default_ref_audio": "",
            "identity": {"library": "standin_minicpmo " + __version__, "checkpoint": "standin", "revision": "none"}}
