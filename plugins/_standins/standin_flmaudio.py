"""A stand-in for the parts of FLM-Audio (cofe-ai/flm-audio, package `flmaudio` run from a
checkout) that the flm-audio adapter calls, in numpy. It is NOT FLM-Audio.

Same call signatures, shapes and state rules as flmaudio/models at commit 41d768c:
- `loaders.get_mimi(mimi_path, device)`: the vendored Moshi Mimi (24 kHz, 1920-sample
  frames, 8 codebooks); the stand-in reuses standin_moshi's Mimi.
- `FLMAudioForCausalLM.from_pretrained(path, device_map=..., torch_dtype=..., low_cpu_mem_usage=True)`
  with `config.aud_channel` 8 and `config.mm_token_info.text_wait_token_id`.
- `LMGen(lm_model, *, use_sampling=True, temp_audio=0.5, temp_text=0.01, top_k_audio=1,
  top_k_text=1, top_p_audio=0.9, top_p_text=0.9, repetition_penalty_audio=1.2,
  repetition_penalty_text=1.03, repetition_penalty_window_audio=50,
  repetition_penalty_window_text=50)` (keyword-only); `step(codes)` asserts exactly
  aud_channel (8) input codebooks and [B, K, 1], returns None while offset <= max_delay (1),
  then int64 [B, 9, 1]. Streaming mode is required, as the real StreamingModule.
- `AutoTokenizer.from_pretrained(path)` with `decode(ids)`.

Behaviour (made up): after loud input (mean input code above 512) then 3 quiet frames it
speaks 6 to 12 frames: text tokens 10..30 (word pieces, "w<id>" with a leading space
every other token), then the wait token that ends the text segment.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

import standin_moshi

__version__ = "41d768c-standin"

WAIT_TOKEN = 5
TEXT_PAD = 3

_rng = np.random.default_rng(0)


def manual_seed(seed: int) -> None:
    global _rng
    _rng = np.random.default_rng(seed)


class loaders:  # noqa: N801 - mirrors flmaudio.models.loaders
    @staticmethod
    def get_mimi(mimi_path, device="cpu"):
        return standin_moshi.MimiModel(num_codebooks=8)


class FLMAudioForCausalLM:
    def __init__(self):
        self.config = SimpleNamespace(aud_channel=8, mm_token_info=SimpleNamespace(text_wait_token_id=WAIT_TOKEN))
        self.device = "cpu"

    @classmethod
    def from_pretrained(cls, path, device_map="cpu", torch_dtype=None, low_cpu_mem_usage=True):
        m = cls()
        m.device = device_map
        return m


class LMGen(standin_moshi._Streaming):
    def __init__(self, lm_model, *, use_sampling=True, temp_audio=0.5, temp_text=0.01, top_k_audio=1, top_k_text=1,
                 top_p_audio=0.9, top_p_text=0.9, repetition_penalty_audio=1.2, repetition_penalty_text=1.03,
                 repetition_penalty_window_audio=50, repetition_penalty_window_text=50):
        super().__init__()
        self.lm_model = lm_model
        self.use_sampling = use_sampling
        self.temp_audio, self.temp_text = temp_audio, temp_text
        self.top_k_audio, self.top_k_text = top_k_audio, top_k_text
        self.top_p_audio, self.top_p_text = top_p_audio, top_p_text
        self.repetition_penalty_audio, self.repetition_penalty_text = repetition_penalty_audio, repetition_penalty_text
        self.max_delay = 1

    def _init_streaming_state(self, batch_size):
        return {"batch_size": batch_size, "offset": 0, "heard": False, "quiet": 0, "speak_left": 0, "pending": []}

    def step(self, input_tokens):
        state = self._streaming_state
        if state is None:
            raise RuntimeError("You should wrap those calls with a `with lm_gen.streaming(): ...`.")
        assert input_tokens.ndim == 3, "Shape should be [B, K, T]."
        B, Ki, S = input_tokens.shape
        assert S == 1, "Only support being given steps one by one."
        needed = self.lm_model.config.aud_channel
        assert Ki == needed, f"We expect {needed} tokens from the user stream, got {Ki}."
        loud = float(input_tokens[:, 0, 0].mean()) > 512
        if state["speak_left"] == 0:
            if loud:
                state["heard"], state["quiet"] = True, 0
            elif state["heard"]:
                state["quiet"] += 1
                if state["quiet"] >= 3:
                    state["heard"] = False
                    state["speak_left"] = int(_rng.integers(6, 13))
        tokens = np.zeros((B, 9, 1), dtype=np.int64)
        if state["speak_left"] > 0:
            state["speak_left"] -= 1
            tokens[:, 0, 0] = WAIT_TOKEN if state["speak_left"] == 0 else _rng.integers(10, 30)
            tokens[:, 1, 0] = 1 + _rng.integers(1024, 2046)
            tokens[:, 2:, 0] = _rng.integers(0, 2048, size=7)
        else:
            tokens[:, 0, 0] = TEXT_PAD
        state["offset"] += 1
        state["pending"].append(tokens)
        if state["offset"] <= self.max_delay:
            return None
        return state["pending"].pop(0)


class Tokenizer:
    def decode(self, ids, skip_special_tokens=False):
        return "".join((" " if i % 2 == 0 else "") + f"w{i}" for i in (int(x) for x in ids))


class AutoTokenizer:
    @staticmethod
    def from_pretrained(path):
        return Tokenizer()


class Ops(standin_moshi.Ops):
    def seed(self, seed: int) -> None:
        manual_seed(seed)


def load(config: dict) -> dict:
    lm = FLMAudioForCausalLM.from_pretrained("standin", device_map=config.get("device", "cpu"))
    return {
        "mimi": loaders.get_mimi("standin", config.get("device", "cpu")),
        "lm": lm,
        "lm_gen_class": LMGen,
        "tokenizer": AutoTokenizer.from_pretrained("standin"),
        "ops": Ops(),
        "identity": {"library": "standin_flmaudio " + __version__, "checkpoint": "standin", "revision": "none"},
    }
