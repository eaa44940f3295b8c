"""A stand-in for the parts of the `moshi` library (kyutai-labs/moshi 0.2.x) that the
moshi adapter calls, in numpy, so the adapter is tested where torch is not installed.

It is NOT Moshi. It keeps the real call signatures, tensor shapes, dtypes and state rules:

- `loaders.get_mimi(filename, mimi_config=None, device="cpu", num_codebooks=8)` returns a
  `MimiModel` with `sample_rate` 24000, `frame_rate` 12.5, `frame_size` 1920.
  `encode(x)` takes float32 [B, 1, T] with T a positive multiple of 1920 and returns int64
  codes [B, num_codebooks, T // 1920]; `decode(codes)` takes [B, num_codebooks, S] and
  returns float32 [B, 1, S * 1920]. Both are stateful in streaming mode (what they return
  depends on how many frames went through since the last `reset_streaming()`), as the
  real causal convolutions and transformer are.
- `LMGen(lm_model, use_sampling=True, temp=0.8, temp_text=0.7, top_k=250, top_k_text=25,
  cfg_coef=1.0, check=False, condition_tensors=None, ...)`; `step(codes)` takes int64
  [B, K, 1] with K >= lm.num_codebooks - lm.dep_q - 1 (8) and returns None for the first
  `max_delay` (1) steps after a reset, then int64 [B, 1 + dep_q, 1]: a text token then
  dep_q audio codes. It must be in streaming mode, as the real one.
- Sampling draws from one global generator seeded by `manual_seed`, as torch's is.

Behaviour (made up, simple enough to assert on): after it has heard loud input (mean
input code above 512) followed by 3 quiet frames, the LM "answers" for 5 to 14 frames
(drawn from the generator): audio codes with a non-zero amplitude code and text tokens
other than the padding token 3. Otherwise it emits amplitude code 0 (silence) and text 3.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

__version__ = "0.2.13-standin"

SAMPLE_RATE = 24000
FRAME_RATE = 12.5
FRAME_SIZE = 1920
CARD = 2048
TEXT_PAD = 3

_rng = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    global _rng
    _rng = np.random.default_rng(seed)


class _Streaming:
    """The StreamingModule contract: streaming_forever / reset_streaming."""

    def __init__(self):
        self._streaming_state = None

    def _init_streaming_state(self, batch_size: int):
        raise NotImplementedError

    def streaming_forever(self, batch_size: int) -> None:
        self._streaming_state = self._init_streaming_state(batch_size)

    def reset_streaming(self, reset_mask=None) -> None:
        if self._streaming_state is None:
            raise ValueError(f"Trying to reset streaming, but {type(self).__name__} wasn't streaming.")
        self._streaming_state = self._init_streaming_state(self._streaming_state["batch_size"])


class MimiModel(_Streaming):
    def __init__(self, num_codebooks: int = 8):
        super().__init__()
        self.sample_rate = SAMPLE_RATE
        self.frame_rate = FRAME_RATE
        self.frame_size = FRAME_SIZE
        self.num_codebooks = num_codebooks

    def set_num_codebooks(self, n: int) -> None:
        self.num_codebooks = n

    def _init_streaming_state(self, batch_size: int):
        return {"batch_size": batch_size, "encoded": 0, "decoded": 0}

    def encode(self, x: np.ndarray) -> np.ndarray:
        if not isinstance(x, np.ndarray) or x.dtype != np.float32 or x.ndim != 3 or x.shape[1] != 1:
            raise ValueError(f"encode expects float32 [B, 1, T], got {getattr(x, 'dtype', type(x))} {getattr(x, 'shape', '')}")
        T = x.shape[-1]
        if T == 0 or T % FRAME_SIZE != 0:
            raise ValueError(f"In streaming mode, input should be a positive multiple of the frame size {FRAME_SIZE}, got {T}")
        frames = T // FRAME_SIZE
        B = x.shape[0]
        codes = np.zeros((B, self.num_codebooks, frames), dtype=np.int64)
        st = self._streaming_state
        for f in range(frames):
            chunk = x[:, 0, f * FRAME_SIZE:(f + 1) * FRAME_SIZE]
            level = np.minimum(np.sqrt(np.mean(chunk.astype(np.float64) ** 2, axis=-1)) * 4 * CARD, CARD - 1)
            pos = st["encoded"] if st is not None else 0
            for q in range(self.num_codebooks):
                # q == 0 carries the level; the others depend on the position since reset.
                codes[:, q, f] = level.astype(np.int64) if q == 0 else (pos * 7 + q * 131 + level.astype(np.int64)) % CARD
            if st is not None:
                st["encoded"] += 1
        return codes

    def decode(self, codes: np.ndarray) -> np.ndarray:
        if not isinstance(codes, np.ndarray) or codes.dtype != np.int64 or codes.ndim != 3:
            raise ValueError(f"decode expects int64 [B, K, S], got {getattr(codes, 'dtype', type(codes))} {getattr(codes, 'shape', '')}")
        if codes.shape[1] != self.num_codebooks:
            raise ValueError(f"decode expects {self.num_codebooks} codebooks, got {codes.shape[1]}")
        B, _, S = codes.shape
        out = np.zeros((B, 1, S * FRAME_SIZE), dtype=np.float32)
        st = self._streaming_state
        for s in range(S):
            start = (st["decoded"] if st is not None else 0) * FRAME_SIZE
            t = (start + np.arange(FRAME_SIZE)) / SAMPLE_RATE
            for b in range(B):
                amp = 0.5 * codes[b, 1, s] / (CARD - 1)
                freq = 150.0 + codes[b, 0, s] % 200
                out[b, 0, s * FRAME_SIZE:(s + 1) * FRAME_SIZE] = (amp * np.sin(2 * np.pi * freq * t)).astype(np.float32)
            if st is not None:
                st["decoded"] += 1
        return out


@dataclass
class LMModel:
    dep_q: int = 8
    n_q: int = 16
    card: int = CARD
    text_card: int = 32000
    delays: list = field(default_factory=lambda: [0, 0, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 1, 1, 1, 1])
    device: str = "cpu"
    training: bool = False

    @property
    def num_codebooks(self) -> int:
        return self.n_q + 1


class LMGen(_Streaming):
    def __init__(self, lm_model: LMModel, use_sampling: bool = True, temp: float = 0.8,
                 temp_text: float = 0.7, top_k: int = 250, top_k_text: int = 25,
                 cfg_coef: float = 1.0, check: bool = False, condition_tensors=None,
                 on_text_hook=None, on_text_logits_hook=None, on_audio_hook=None,
                 support_out_of_sync: bool = False, cfg_is_masked_until=None,
                 cfg_is_no_text: bool = False):
        assert not lm_model.training, "generation shouldn't be used in training mode."
        super().__init__()
        self.lm_model = lm_model
        self.use_sampling = use_sampling
        self.temp = temp
        self.temp_text = temp_text
        self.top_k = top_k
        self.top_k_text = top_k_text
        self.cfg_coef = cfg_coef
        self.max_delay = max(lm_model.delays)

    def _init_streaming_state(self, batch_size: int):
        return {"batch_size": batch_size, "offset": 0, "heard": False, "quiet": 0, "speak_left": 0, "pending": []}

    def step(self, input_tokens: np.ndarray):
        state = self._streaming_state
        if state is None:
            raise RuntimeError("You should wrap those calls with a `with lm_gen.streaming(): ...`.")
        if not isinstance(input_tokens, np.ndarray) or input_tokens.ndim != 3:
            raise AssertionError("Shape should be [B, K, T].")
        B, K, S = input_tokens.shape
        assert B == state["batch_size"], f"Got a batch size {B}, expected {state['batch_size']}"
        assert S == 1, "Only support being given steps one by one."
        needed = self.lm_model.num_codebooks - self.lm_model.dep_q - 1
        assert K >= needed, f"We expect {needed} tokens from the user stream, got {K}."

        loud = float(input_tokens[:, 0, 0].mean()) > 512
        if state["speak_left"] == 0:
            if loud:
                state["heard"], state["quiet"] = True, 0
            elif state["heard"]:
                state["quiet"] += 1
                if state["quiet"] >= 3:
                    state["heard"] = False
                    state["speak_left"] = int(_rng.integers(5, 15))
        tokens = np.zeros((B, 1 + self.lm_model.dep_q, 1), dtype=np.int64)
        if state["speak_left"] > 0:
            state["speak_left"] -= 1
            tokens[:, 0, 0] = _rng.integers(4, 1000)
            tokens[:, 1, 0] = 1 + _rng.integers(CARD // 2, CARD - 1)
            tokens[:, 2:, 0] = _rng.integers(0, CARD, size=self.lm_model.dep_q - 1)
        else:
            tokens[:, 0, 0] = TEXT_PAD
        state["offset"] += 1
        state["pending"].append(tokens)
        if state["offset"] <= self.max_delay:
            return None
        return state["pending"].pop(0)


class loaders:  # noqa: N801 - mirrors the module name moshi.models.loaders
    DEFAULT_REPO = "kyutai/moshiko-pytorch-bf16"

    @staticmethod
    def get_mimi(filename, mimi_config=None, device="cpu", num_codebooks: int = 8) -> MimiModel:
        return MimiModel(num_codebooks=num_codebooks)


class TextTokenizer:
    """sentencepiece.SentencePieceProcessor's id_to_piece."""

    def id_to_piece(self, token_id: int) -> str:
        return f"\u2581w{int(token_id)}"


class Ops:
    """The numpy side of the adapter's tensor bridge (the real one wraps torch)."""

    def from_numpy(self, array: np.ndarray) -> np.ndarray:
        return np.array(array, dtype=np.float32, copy=True)

    def to_numpy(self, tensor: np.ndarray) -> np.ndarray:
        return np.asarray(tensor, dtype=np.float32)

    def item(self, tensor) -> int:
        return int(np.asarray(tensor).reshape(-1)[0])

    def seed(self, seed: int) -> None:
        manual_seed(seed)

    def no_grad(self):
        return contextlib.nullcontext()


def load(config: dict) -> dict:
    """The adapter's factory hook: what the official loader returns, built from the stand-in."""
    return {
        "mimi": loaders.get_mimi(None, device=config.get("device", "cpu")),
        "lm": LMModel(),
        "lm_gen_class": LMGen,
        "lm_gen_config": {},
        "text_tokenizer": TextTokenizer(),
        "ops": Ops(),
        "identity": {"library": "standin_moshi " + __version__, "checkpoint": "standin", "revision": "none"},
    }


models = SimpleNamespace(LMGen=LMGen, LMModel=LMModel, MimiModel=MimiModel, loaders=loaders)
