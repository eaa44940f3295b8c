"""Moshi driven in-process, one 80 ms frame per step: Mimi encode -> LMGen.step -> Mimi decode.

This module holds everything but the wire: config checking, loading, and the per-frame
loop that kyutai's own server (moshi/server.py) runs for each connection, minus Opus and
the WebSocket. plugin.py binds it to the duplexmpe Python SDK.

The model library is reached through a "runtime" dict (see `load_official`): mimi, lm,
lm_gen_class, text_tokenizer, and `ops`, a tiny bridge between numpy frames and the
library's tensors. The official runtime uses torch; tests pass a stand-in (numpy) or a
tiny randomly initialised real model through the `factory` config field.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from adapter_kit import (FACTORY, ConfigError, Field, OneConversationAtATime, StepOutput, TorchOps, check_fields,
                         load_runtime, mimi_lm_step, whole)

NAME = "moshi"
VERSION = "0.1.0"
SAMPLE_RATE = 24000
FRAME_SIZE = 1920  # 80 ms at 24 kHz: one Mimi frame, one LM step
TEXT_PAD_IDS = (0, 3)  # the server drops these text tokens (pad / end of padding)


SCHEMA = (
    Field("hf_repo", "string", "kyutai/moshiko-pytorch-bf16",
          "Hugging Face repository of the checkpoint (Moshiko or Moshika)."),
    Field("revision", "string", "",
          "Commit of hf_repo to load; empty loads the default branch. The resolved commit is reported in the identity either way."),
    Field("device", "string", "cuda", "torch device, e.g. cuda, cuda:1 or cpu."),
    Field("dtype", "string", "bfloat16", "Weights dtype of the LM.", ("bfloat16", "float16", "float32")),
    Field("temp", "number", None, "Audio sampling temperature; null keeps the checkpoint's or library's default (0.8)."),
    Field("temp_text", "number", None, "Text sampling temperature; null keeps the default (0.7)."),
    Field("top_k", "number", None, "Audio top-k; null keeps the default (250)."),
    Field("top_k_text", "number", None, "Text top-k; null keeps the default (25)."),
    Field("seed", "number", 0,
          "Added to each conversation's seed before seeding the sampler; change it to draw another sample of the same run."),
    Field("factory", "string", "",
          "module:function returning the runtime instead of loading hf_repo (tests, custom checkpoints); empty uses the official loader."),
)

_SAMPLING = ("temp", "temp_text", "top_k", "top_k_text")
_DEVICE = re.compile(r"^(cpu|cuda(:\d+)?|mps)$")


def check_config(config: dict) -> dict:
    """Returns config with defaults filled in, or raises ConfigError naming the field."""
    out = check_fields(config, SCHEMA)
    if not _DEVICE.match(out["device"]):
        raise ConfigError(f"device: expected cpu, cuda or cuda:N, got {out['device']!r}")
    for name in ("temp", "temp_text"):
        if out[name] is not None and not out[name] >= 0:
            raise ConfigError(f"{name}: expected a temperature >= 0, got {out[name]!r}")
    for name in ("top_k", "top_k_text"):
        if out[name] is not None and (out[name] < 1 or not whole(out[name])):
            raise ConfigError(f"{name}: expected a whole number >= 1, got {out[name]!r}")
        if out[name] is not None:
            out[name] = int(out[name])
    if not whole(out["seed"]):
        raise ConfigError(f"seed: expected a whole number, got {out['seed']!r}")
    out["seed"] = int(out["seed"])
    if out["factory"] and not FACTORY.match(out["factory"]):
        raise ConfigError(f"factory: expected module:function, got {out['factory']!r}")
    if not out["hf_repo"] and not out["factory"]:
        raise ConfigError("hf_repo: expected a repository id such as kyutai/moshiko-pytorch-bf16")
    return out


def _snapshot_commit(path: Path) -> str:
    """hf_hub_download paths end in snapshots/<commit>/<file>: the resolved revision."""
    parts = Path(path).parts
    if "snapshots" in parts:
        i = parts.index("snapshots")
        if i + 1 < len(parts):
            return parts[i + 1]
    return ""


def load_official(config: dict) -> dict:
    """Loads the checkpoint the way moshi/server.py main() does."""
    import moshi
    import torch
    from moshi.models import LMGen, loaders

    info = loaders.CheckpointInfo.from_hf_repo(config["hf_repo"], revision=config["revision"] or None)
    mimi = info.get_mimi(device=config["device"])
    lm = info.get_moshi(device=config["device"], dtype=getattr(torch, config["dtype"]))
    identity = {
        "checkpoint": config["hf_repo"],
        "revision": _snapshot_commit(info.moshi_weights) or config["revision"] or "unknown",
        "moshi_weights": Path(info.moshi_weights).name,
        "mimi_weights": Path(info.mimi_weights).name,
        "model_type": info.model_type,
        "library": f"moshi {getattr(moshi, '__version__', 'unknown')}",
        "torch": torch.__version__,
    }
    return {
        "mimi": mimi,
        "lm": lm,
        "lm_gen_class": LMGen,
        "lm_gen_config": dict(info.lm_gen_config),
        "text_tokenizer": info.get_text_tokenizer(),
        "ops": TorchOps(config["device"]),
        "identity": identity,
    }



class MoshiAdapter(OneConversationAtATime):
    """One loaded model; serves one conversation at a time (the LM state is not batched)."""

    def __init__(self):
        super().__init__()
        self.config: dict | None = None
        self.runtime: dict | None = None
        self.lm_gen = None
        self.sampling: dict = {}

    def configure(self, config: dict) -> None:
        config = check_config(config)
        if config == self.config:
            return  # already loaded with this config: do not load the weights twice
        self._check_idle()
        self.config = self.runtime = self.lm_gen = None  # let the old model go before loading a new one
        runtime = load_runtime(config, "hf_repo", {"mimi", "lm", "lm_gen_class", "text_tokenizer", "ops", "identity"},
                               load_official)
        # Library defaults < the checkpoint's lm_gen_config < the run file.
        sampling = dict(runtime.get("lm_gen_config") or {})
        sampling.update({k: config[k] for k in _SAMPLING if config[k] is not None})
        mimi = runtime["mimi"]
        if int(mimi.sample_rate) != SAMPLE_RATE or int(round(mimi.sample_rate / mimi.frame_rate)) != FRAME_SIZE:
            raise ConfigError(f"the checkpoint's Mimi runs at {mimi.sample_rate} Hz / {mimi.frame_rate} Hz; "
                              f"this adapter expects {SAMPLE_RATE} Hz frames of {FRAME_SIZE}")
        self.lm_gen = runtime["lm_gen_class"](runtime["lm"], **sampling)
        mimi.streaming_forever(1)
        self.lm_gen.streaming_forever(1)
        self.config, self.runtime = config, runtime
        self.sampling = {k: getattr(self.lm_gen, k) for k in _SAMPLING}

    def identity(self) -> dict:
        if self.runtime is None:
            return {}
        ident = dict(self.runtime["identity"])
        ident["sampling"] = json.dumps(self.sampling, sort_keys=True)
        ident["dtype"] = self.config["dtype"]
        return {k: str(v) for k, v in ident.items()}

    def start(self, conversation_id: str, seed: int, instruction: str = "") -> "MoshiConversation":
        if self.runtime is None:
            raise RuntimeError("moshi: Start before Configure")
        if instruction:
            raise ValueError("moshi has no text instruction (it only hears the spoken preamble); "
                             "remove the instruction from the run file for this model")
        seed = (seed + self.config["seed"]) % 2**63
        return self._open(NAME, lambda: MoshiConversation(self, conversation_id, seed))


class MoshiConversation:
    input_rate = SAMPLE_RATE
    output_rate = SAMPLE_RATE
    frame_size = FRAME_SIZE

    def __init__(self, adapter: MoshiAdapter, conversation_id: str, seed: int):
        self.adapter = adapter
        self.conversation_id = conversation_id
        self.closed = False
        rt = adapter.runtime
        self.mimi, self.lm_gen, self.ops, self.tok = rt["mimi"], adapter.lm_gen, rt["ops"], rt["text_tokenizer"]
        # Fresh state, as handle_chat does for each WebSocket connection.
        self.mimi.reset_streaming()
        self.lm_gen.reset_streaming()
        self.ops.seed(seed)
        self.frames = 0

    def step(self, frame: np.ndarray) -> StepOutput:
        if self.closed:
            raise RuntimeError(f"conversation {self.conversation_id!r} is closed")
        frame = np.asarray(frame, dtype=np.float32).reshape(-1)
        if frame.shape[0] != FRAME_SIZE:
            raise ValueError(f"moshi takes frames of exactly {FRAME_SIZE} samples at {SAMPLE_RATE} Hz, got {frame.shape[0]}")
        with self.ops.no_grad():
            codes = self.mimi.encode(self.ops.from_numpy(frame[None, None, :]))
            if self.frames == 0:
                # The server resets Mimi after encoding the first frame ("skip_frames") and
                # still feeds that frame's codes to the LM.
                self.mimi.reset_streaming()
            self.frames += 1
            samples, tokens = mimi_lm_step(self.mimi, self.lm_gen, self.ops, codes)
        text = "".join(self.tok.id_to_piece(t).replace("\u2581", " ") for t in tokens if t not in TEXT_PAD_IDS)
        return StepOutput(samples=samples, text=text)

    def close(self) -> None:
        self.closed = True
        self.adapter._closed()
