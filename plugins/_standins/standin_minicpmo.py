"""A stand-in for MiniCPM-o 4.5's duplex API, in numpy, so the minicpm-o adapter is tested
where torch is not installed. It is NOT MiniCPM-o.

What it mirrors is the duplex object the official demo drives, `DuplexCapability` in
OpenBMB/MiniCPM-o-Demo `MiniCPMO45/modeling_minicpmo_unified.py` at commit 28b60cf
(`model.duplex` after `init_unified`; the checkpoint's remote code returns the duplex
object from `as_duplex()`). plugins/minicpm-o/tests/test_standin_matches_demo.py checks
these facts point by point, with the upstream file and line they come from:

- `prepare(prefix_system_prompt=None, suffix_system_prompt=None, ref_audio=None,
  prompt_wav_path=None, context_previous_marker="\\n\\nprevious: ")` resets the streaming
  state (a new conversation) and returns the prompt with "[音频嵌入]" for the voice.
- `streaming_prefill(audio_waveform=None, frame_list=None, max_slice_nums=1,
  batch_vision_feed=False)`: raises RuntimeError while `needs_finalize` (a property);
  the first unit is padded at the front to 1035 ms (16560 samples) and consumes the
  Whisper-hop-aligned 1030 ms (16480); later units need and consume 1000 ms (16000).
  Returns {"success": False, "reason": ...} when not enough audio, {"success": True, ...}.
- `streaming_generate(prompt_wav_path=None, max_new_speak_tokens_per_chunk=20,
  decode_mode="sampling", temperature=0.7, top_k=20, top_p=0.8, listen_prob_scale=1.0,
  listen_top_k=None, text_repetition_penalty=1.05, text_repetition_window_size=512,
  length_penalty=1.1, force_listen_override=False)`: the first `force_listen_count`
  calls after `prepare` are forced to listen (the attribute defaults to 0 in the class;
  the demo configures 3); returns `_make_generate_result`'s keys, 1 s of zeros at 24 kHz
  (`_generate_silence_waveform`) when listening; afterwards `finalize_unit()` must run
  before the next prefill.
- `AutoModel.from_pretrained(name, trust_remote_code=True, ...)`, `.eval()`, `.to(device)`,
  `.init_tts()`, `.as_duplex()`: the remote-code route the adapter's loader takes.
- Sampling draws from one global generator seeded by `manual_seed`, as torch's is.

Behaviour (made up): a unit whose RMS is above 0.05 is "heard" (at prefill, even while
forced to listen); at the first unforced quiet unit after one, it speaks for 2 to 4 units
(drawn from the generator), a 220 Hz tone of 24000 samples per unit and text "w<n> ";
the last speaking unit has end_of_turn. If the system prompt contains "stay silent", it
never speaks. `load()` writes a 1 s 16 kHz default voice, as a checkpoint's assets hold one.
"""

from __future__ import annotations

import contextlib
import tempfile
import wave
from pathlib import Path
from typing import Optional

import numpy as np

__version__ = "4.5-standin"

SAMPLE_RATE = 16000
OUT_RATE = 24000
CHUNK_MS = 1000
FIRST_CHUNK_MS = 1035
HOP = 160  # Whisper's hop: StreamingMelProcessorExact aligns the first chunk to it

_rng = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    global _rng
    _rng = np.random.default_rng(seed)


class Duplex:
    def __init__(self, model: "Model", generate_audio: bool = True, ls_mode: str = "explicit", device: str = "cuda",
                 **kwargs):
        self.model = model
        self.device = device
        self.generate_audio = generate_audio
        self.ls_mode = ls_mode
        self.force_listen_count = kwargs.get("force_listen_count", 0)
        self.CHUNK_MS = kwargs.get("chunk_ms", CHUNK_MS)
        self.FIRST_CHUNK_MS = kwargs.get("first_chunk_ms", FIRST_CHUNK_MS)
        self.SAMPLE_RATE = kwargs.get("sample_rate", SAMPLE_RATE)
        self.prepared = False
        self.prepare_calls = []
        self.finalized_units = 0
        self._reset_streaming_state()

    def _reset_streaming_state(self):
        self.audio_chunk_idx = 0
        self.audio_buffer = np.array([], dtype=np.float32)
        self.pending_logits = None
        self._streaming_generate_count = 0
        self._pending_finalize = None
        self.current_turn_ended = True
        self.heard = False
        self.last_rms = 0.0
        self.speak_left = 0

    def prepare(self, prefix_system_prompt: Optional[str] = None, suffix_system_prompt: Optional[str] = None,
                ref_audio: Optional[np.ndarray] = None, prompt_wav_path: Optional[str] = None,
                context_previous_marker: str = "\n\nprevious: "):
        if ref_audio is not None and (not isinstance(ref_audio, np.ndarray) or ref_audio.ndim != 1):
            raise ValueError("ref_audio must be a 1-D float32 array at 16 kHz")
        self._reset_streaming_state()
        self.prepared = True
        self.prompt = (prefix_system_prompt or "") + (suffix_system_prompt or "")
        self.prepare_calls.append({"prefix": prefix_system_prompt, "suffix": suffix_system_prompt,
                                   "ref_audio_len": None if ref_audio is None else len(ref_audio),
                                   "ref_audio": ref_audio, "prompt_wav_path": prompt_wav_path})
        if prefix_system_prompt or suffix_system_prompt:
            voice = "[音频嵌入]" if ref_audio is not None else ""
            return (prefix_system_prompt or "") + voice + (suffix_system_prompt or "")
        return ""

    @property
    def needs_finalize(self) -> bool:
        return self._pending_finalize is not None

    def _first_chunk_samples(self) -> int:
        raw = int(round(self.FIRST_CHUNK_MS * self.SAMPLE_RATE / 1000))
        return max(HOP, raw // HOP * HOP)

    def streaming_prefill(self, audio_waveform: Optional[np.ndarray] = None, frame_list: Optional[list] = None,
                          max_slice_nums=1, batch_vision_feed: bool = False):
        if self.needs_finalize:
            raise RuntimeError("streaming_prefill called before finalize_unit()!")
        if not self.prepared:
            raise RuntimeError("streaming_prefill before prepare()")
        if audio_waveform is None or len(audio_waveform) == 0:
            return {"success": False, "reason": ""}
        if not isinstance(audio_waveform, np.ndarray) or audio_waveform.dtype != np.float32 or audio_waveform.ndim != 1:
            raise ValueError("audio_waveform must be a 1-D float32 numpy array at 16 kHz")
        self.pending_logits = None
        self.audio_buffer = np.concatenate([self.audio_buffer, audio_waveform])
        if self.audio_chunk_idx == 0:
            required = int(self.FIRST_CHUNK_MS * self.SAMPLE_RATE / 1000)
            if len(self.audio_buffer) < required:
                pad = np.zeros(required - len(self.audio_buffer), np.float32)
                self.audio_buffer = np.concatenate([pad, self.audio_buffer])
            need = consumed = self._first_chunk_samples()
        else:
            need = consumed = int(self.CHUNK_MS * self.SAMPLE_RATE / 1000)
        if len(self.audio_buffer) < need:
            return {"success": False, "reason": f"音频不足: 需要 {need} 样本, 只有 {len(self.audio_buffer)}"}
        unit = self.audio_buffer[:need]
        self.audio_buffer = self.audio_buffer[consumed:]
        self.last_rms = float(np.sqrt(np.mean(unit.astype(np.float64) ** 2)))
        if self.last_rms > 0.05:
            self.heard = True
        self.audio_chunk_idx += 1
        self.pending_logits = self.last_rms
        return {"success": True, "reason": ""}

    @staticmethod
    def _generate_silence_waveform(duration_sec: float = 1.0) -> np.ndarray:
        return np.zeros(int(duration_sec * OUT_RATE), dtype=np.float32)

    def _make_generate_result(self, is_listen=True, text="", audio_waveform=None, end_of_turn=False, n_tokens=0):
        return {"is_listen": is_listen, "text": text,
                "audio_waveform": audio_waveform if audio_waveform is not None else self._generate_silence_waveform(),
                "end_of_turn": end_of_turn, "current_time": self.audio_chunk_idx, "cost_llm": 0.0,
                "cost_tts_prep": 0.0, "cost_tts": 0.0, "cost_token2wav": 0.0, "cost_all": 0.0,
                "n_tokens": n_tokens, "n_tts_tokens": 0}

    def streaming_generate(self, prompt_wav_path=None, max_new_speak_tokens_per_chunk=20, decode_mode: str = "sampling",
                           temperature=0.7, top_k=20, top_p=0.8, listen_prob_scale=1.0, listen_top_k=None,
                           text_repetition_penalty=1.05, text_repetition_window_size=512, length_penalty=1.1,
                           force_listen_override: bool = False):
        if self.pending_logits is None:
            self._pending_finalize = None
            return self._make_generate_result()
        self.pending_logits = None
        force_listen = self._streaming_generate_count < self.force_listen_count or force_listen_override
        self._streaming_generate_count += 1
        self._pending_finalize = {"is_listen": True}
        if force_listen:
            return self._make_generate_result()
        if self.speak_left == 0 and "stay silent" not in self.prompt and self.heard and self.last_rms <= 0.05:
            self.heard = False
            self.speak_left = int(_rng.integers(2, 5))
        if self.speak_left == 0:
            return self._make_generate_result()
        self.speak_left -= 1
        self.current_turn_ended = self.speak_left == 0
        self._pending_finalize = {"is_listen": False}
        t = np.arange(OUT_RATE) / OUT_RATE
        words = " ".join(f"w{int(_rng.integers(0, 1000))}" for _ in range(3)) + " "
        return self._make_generate_result(is_listen=False, text=words,
                                          audio_waveform=(0.3 * np.sin(2 * np.pi * 220 * t)).astype(np.float32),
                                          end_of_turn=self.speak_left == 0, n_tokens=3)

    def finalize_unit(self):
        if self._pending_finalize is None:
            return
        self._pending_finalize = None
        self.finalized_units += 1


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
        return Duplex(self, device=self.device, **kwargs)


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


def write_default_voice(directory: Path) -> Path:
    """A 1 s 16 kHz mono 16-bit WAV (a 180 Hz tone): the checkpoint's default voice asset."""
    path = Path(directory) / "assets" / "HT_ref_audio.wav"
    path.parent.mkdir(parents=True, exist_ok=True)
    t = np.arange(SAMPLE_RATE) / SAMPLE_RATE
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(SAMPLE_RATE)
        w.writeframes((0.2 * np.sin(2 * np.pi * 180 * t) * 32767).astype("<i2").tobytes())
    return path


_assets = None


def load(config: dict) -> dict:
    global _assets
    model = AutoModel.from_pretrained(config.get("checkpoint", "standin"), trust_remote_code=True,
                                      attn_implementation=config.get("attn_implementation", "sdpa"),
                                      init_vision=False, init_audio=True, init_tts=True).eval()
    model.init_tts()
    if _assets is None:
        _assets = tempfile.TemporaryDirectory(prefix="standin_minicpmo-")
    voice = write_default_voice(Path(_assets.name))
    return {"duplex": model.as_duplex(), "ops": Ops(), "default_ref_audio": str(voice),
            "identity": {"library": "standin_minicpmo " + __version__, "checkpoint": "standin", "revision": "none"}}
