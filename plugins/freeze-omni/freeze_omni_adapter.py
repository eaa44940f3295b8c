"""Freeze-Omni driven in-process on our clock: VAD + LLM state prediction per 160 ms chunk,
and, when the state head says "start speaking", the whole answer generated and voiced
at once (bursty output; the host's playback buffer paces it).

This is bin/server.py's pipeline without Flask, socket.io and threads: `send_pcm` (VAD,
pre-roll of 6 cached chunks on speech start), `llm_prefill` (the 'sl'/'cl'/'el'/'ss'
state machine) and `generate` + `decoder` (text tokens until the state leaves 'cs', TTS
at punctuation). The server runs generation in a thread as fast as the GPU allows and
hands out audio as the client keeps sending; here generation runs inside the step where
'ss' was predicted, so the run depends on the frame index only.

`Freeze-Omni` is not on PyPI: it is imported from a checkout (`freeze_omni_dir`). The
torch-side calls (features to tensors, hidden states and text to TTS) sit in a small
bridge; tests replace the runtime with a numpy stand-in through `factory`.
"""

from __future__ import annotations

import copy
import hashlib
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from adapter_kit import (FACTORY, ConfigError, Field, OneConversationAtATime, StepOutput, check_fields,
                         load_runtime, seed_all, source_digest, whole)

NAME = "freeze-omni"
VERSION = "0.1.0"
# What this adapter was verified against, for README.md and Describe.
VERIFIED = ("Freeze-Omni 3e17af4's own code with a tiny random checkpoint on CPU, its CUDA calls mapped to CPU "
            "(make test-adapters): equal to bin/server.py's pipeline with web/vad.py chunk for chunk, and a shipped "
            "conversation plays through this plugin; never run on a GPU with the real weights. Deviations from the "
            "server: an answer is generated and voiced inside the chunk that starts it (the server's thread runs "
            "while more audio arrives), all its audio at once; no socket.io transport.")
INPUT_RATE = 16000
OUTPUT_RATE = 24000
FRAME_SIZE = 2560  # web/vad.py: 16 fbank frames of 160 samples
MAX_ANSWER_TOKENS = 500  # bin/server.py generate(): stop after 500 tokens
FIRST_SEGMENT_GATE = 0.03  # bin/server.py decoder(): the first segment starts where |x| > 0.03
# bin/server.py GlobalParams default role, spaces from its line continuations included.
DEFAULT_ROLE = ("You are a helpful voice assistant." + " " * 77 + "Your answer should be coherent, natural, simple, complete."
                + " " * 77 + "Your name is Xiao Yun." + " " * 77 + "Your inventor is Tencent.")
PUNCT_FIRST = (",", "，", "。", "：", "？", "！", ".", ":", "?", "!", "\n")
PUNCT = ("。", "：", "？", "！", ".", "?", "!", "\n")


SCHEMA = (
    Field("model_path", "string", "", "Directory of the Freeze-Omni checkpoints (audiollm/, decoder/, server.json)."),
    Field("llm_path", "string", "", "Directory of Qwen2-7B-Instruct, which Freeze-Omni keeps frozen."),
    Field("freeze_omni_dir", "string", "",
          "Checkout of github.com/VITA-MLLM/Freeze-Omni (not on PyPI); empty imports its modules from PYTHONPATH."),
    Field("system_role", "string", DEFAULT_ROLE, "System role text (bin/server.py's default); a conversation's instruction replaces it."),
    Field("top_k", "number", 5, "LLM top-k (bin/server.py default)."),
    Field("top_p", "number", 0.8, "LLM top-p."),
    Field("temperature", "number", 0.7, "LLM temperature."),
    Field("seed", "number", 0, "Added to each conversation's seed before seeding torch."),
    Field("factory", "string", "", "module:function returning the runtime instead of loading the checkpoints (tests)."),
)



def check_config(config: dict) -> dict:
    out = check_fields(config, SCHEMA)
    if not whole(out["top_k"]) or out["top_k"] < 1:
        raise ConfigError(f"top_k: expected a whole number >= 1, got {out['top_k']!r}")
    out["top_k"] = int(out["top_k"])
    if not 0 < out["top_p"] <= 1:
        raise ConfigError(f"top_p: expected a value in (0, 1], got {out['top_p']!r}")
    if not out["temperature"] >= 0:
        raise ConfigError(f"temperature: expected >= 0, got {out['temperature']!r}")
    if not whole(out["seed"]):
        raise ConfigError(f"seed: expected a whole number, got {out['seed']!r}")
    out["seed"] = int(out["seed"])
    if not out["system_role"].strip():
        raise ConfigError("system_role: expected a non-empty role text")
    if out["factory"]:
        if not FACTORY.match(out["factory"]):
            raise ConfigError(f"factory: expected module:function, got {out['factory']!r}")
        return out
    for name, must in (("model_path", "server.json"), ("llm_path", "config.json")):
        if not out[name]:
            raise ConfigError(f"{name}: required (see plugins/freeze-omni/README.md)")
        if not (Path(out[name]) / must).is_file():
            raise ConfigError(f"{name}: {out[name]} has no {must}; is it the right directory?")
    if out["freeze_omni_dir"] and not (Path(out["freeze_omni_dir"]) / "models" / "pipeline.py").is_file():
        raise ConfigError(f"freeze_omni_dir: {out['freeze_omni_dir']} is not a Freeze-Omni checkout (no models/pipeline.py)")
    return out


class TorchBridge:
    """The torch side: features to tensors, and bin/server.py decoder()'s TTS call."""

    def __init__(self, decoder_config: dict, device: str = "cuda"):
        import torch

        self.torch = torch
        self.cfg = decoder_config
        self.device = torch.device(device)  # Freeze-Omni's pipeline itself only runs on cuda

    def seed(self, seed: int) -> None:
        seed_all(self.torch, seed)

    def no_grad(self):
        return self.torch.no_grad()

    def feature(self, feature):
        return self.torch.tensor(feature)

    def synthesize(self, runtime, hidden_states, text, generate_num):
        torch, cfg, pipeline = self.torch, self.cfg, runtime["pipeline"]
        hidden = torch.cat(hidden_states).squeeze(1)
        ids = pipeline.model.tokenizer.encode(pipeline.post_process(text))
        if not ids:
            # bin/server.py decoder() would embed torch.tensor([]), a float tensor, and its
            # generate thread would die on the error (the server then waits for it forever):
            # a segment whose text is empty is not voiced.
            return []
        embeddings = pipeline.model.llm_decoder.model.embed_tokens(torch.tensor(ids).to(self.device))
        first = generate_num == 0
        segments = runtime["tts"].run(
            embeddings.reshape(-1, 896).unsqueeze(0), cfg["decoder_top_k"], hidden.reshape(-1, 896).unsqueeze(0),
            cfg["decoder_first_chunk_size"] if first else cfg["decoder_chunk_size"], cfg["decoder_chunk_overlap_size"],
            cfg["decoder_penalty_window_size"], cfg["decoder_penalty"], cfg["decoder_N"],
            cfg["decoder_seg_threshold_first_pack"] if first else cfg["decoder_seg_threshold"])
        return [seg.squeeze().float().cpu().numpy() for seg in segments]


def load_official(config: dict) -> dict:
    """Builds what bin/server.py builds per pipeline and per user: inferencePipeline,
    llm2TTS and the VAD, with server.json's decoder settings."""
    if config["freeze_omni_dir"]:
        sys.path.insert(0, str(Path(config["freeze_omni_dir"]).resolve()))
    import torch
    import transformers
    import models.pipeline
    from models.decoder.llm2tts import llm2TTS
    from models.pipeline import inferencePipeline
    from web.vad import VAD

    checkout = Path(models.pipeline.__file__).resolve().parents[1]  # where the code was imported from

    model_path = str(Path(config["model_path"]).resolve())
    args = SimpleNamespace(model_path=model_path, llm_path=str(Path(config["llm_path"]).resolve()),
                           top_k=config["top_k"], top_p=config["top_p"], temperature=config["temperature"])
    decoder_config = json.loads((Path(model_path) / "server.json").read_text())
    final = Path(model_path) / "audiollm" / "final.pt"
    return {
        "vad": VAD(),
        "pipeline": inferencePipeline(args),
        "tts": llm2TTS(model_path),
        "bridge": TorchBridge(decoder_config),
        "identity": {
            "checkpoint": model_path,
            "revision": _snapshot_commit(Path(model_path)) or "local",
            "audiollm_size": str(final.stat().st_size) if final.exists() else "missing",
            "llm": args.llm_path,
            "library": "Freeze-Omni " + _git_head(checkout),
            "library_code": source_digest(checkout, ("models", "web/vad.py")),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
        },
    }


def _snapshot_commit(path: Path) -> str:
    """A directory inside a Hugging Face cache snapshot (.../snapshots/<commit>/...) names its commit."""
    parts = path.resolve().parts
    return parts[parts.index("snapshots") + 1] if "snapshots" in parts[:-1] else ""


def _git_head(repo: Path) -> str:
    try:
        ref = (repo / ".git" / "HEAD").read_text().strip()
        return (repo / ".git" / ref[5:]).read_text().strip() if ref.startswith("ref: ") else ref
    except OSError:
        return "unknown"



class FreezeOmniAdapter(OneConversationAtATime):
    def __init__(self):
        super().__init__()
        self.config: dict | None = None
        self.runtime: dict | None = None
        self.roles: dict[str, dict] = {}

    def configure(self, config: dict) -> None:
        config = check_config(config)
        if config == self.config:
            return  # already loaded with this config: do not load the weights twice
        self._check_idle()
        self.config = self.runtime = None  # let the old model go before loading a new one
        runtime = load_runtime(config, "model_path", {"vad", "pipeline", "tts", "bridge", "identity"},
                               load_official)
        self.config, self.runtime, self.roles = config, runtime, {}
        self.system_role(config["system_role"])

    def system_role(self, role: str) -> dict:
        """The KV cache prefilled with a role (GlobalParams.set_prompt), computed once per text."""
        if role not in self.roles:
            with self.runtime["bridge"].no_grad():
                self.roles[role] = self.runtime["pipeline"].speech_dialogue(None, stat="pre", role=role)
        return self.roles[role]

    def identity(self) -> dict:
        if self.runtime is None:
            return {}
        ident = dict(self.runtime["identity"])
        ident["system_role_sha256"] = hashlib.sha256(self.config["system_role"].encode()).hexdigest()
        ident["sampling"] = json.dumps({k: self.config[k] for k in ("top_k", "top_p", "temperature")}, sort_keys=True)
        return {k: str(v) for k, v in ident.items()}

    def start(self, conversation_id: str, seed: int, instruction: str = "") -> "FreezeOmniConversation":
        if self.runtime is None:
            raise RuntimeError("freeze-omni: Start before Configure")
        seed = (seed + self.config["seed"]) % 2**63

        def make():  # the role is built once the previous conversation has closed, as before
            role = self.system_role(instruction or self.config["system_role"])
            return FreezeOmniConversation(self, conversation_id, seed, role)
        return self._open(NAME, make)


class FreezeOmniConversation:
    input_rate = INPUT_RATE
    output_rate = OUTPUT_RATE
    frame_size = FRAME_SIZE

    def __init__(self, adapter: FreezeOmniAdapter, conversation_id: str, seed: int, role: dict):
        self.adapter = adapter
        self.conversation_id = conversation_id
        self.closed = False
        rt = adapter.runtime
        self.vad, self.pipeline, self.bridge = rt["vad"], rt["pipeline"], rt["bridge"]
        # GlobalParams.reset(): the role's cache, a fresh VAD.
        self.generate_outputs = copy.deepcopy(role)
        self.outputs: dict | None = None
        self.vad.reset_vad()
        self.bridge.seed(seed)
        self.spoke = False  # has this conversation emitted audio that may still be queued?

    def step(self, frame: np.ndarray) -> StepOutput:
        if self.closed:
            raise RuntimeError(f"conversation {self.conversation_id!r} is closed")
        frame = np.ascontiguousarray(frame, dtype=np.float32).reshape(-1)
        if frame.shape[0] != FRAME_SIZE:
            raise ValueError(f"freeze-omni takes chunks of exactly {FRAME_SIZE} samples at {INPUT_RATE} Hz, got {frame.shape[0]}")
        self.answer: list[np.ndarray] = []
        self.answer_text = ""
        self.flush = False
        with self.bridge.no_grad():
            res = self.vad.predict(frame)
            status = res.get("status")
            if status == "sl":
                # send_pcm: speech started; continue from the last generation's cache and
                # pre-roll the cached chunks before this one.
                outputs = copy.deepcopy(self.generate_outputs)
                outputs.update(adapter_cache=None, encoder_cache=None, pe_index=0, stat="sl", last_id=None)
                outputs.pop("text", None)
                outputs.pop("hidden_state", None)
                for i, feature in enumerate(res["feature_last_chunk"]):
                    outputs = self._prefill("sl" if i == 0 else "cl", feature, outputs, first_pack=True)
                self.outputs = self._prefill("cl", res["feature"], outputs)
            elif status in ("cl", "el") and self.outputs is not None:
                self.outputs = self._prefill(status, res["feature"], self.outputs)
        samples = np.concatenate(self.answer).astype(np.float32) if self.answer else np.zeros(0, np.float32)
        if samples.size:
            self.spoke = True
        return StepOutput(samples=samples, text=self.answer_text, flush=self.flush)

    def _prefill(self, status: str, feature, outputs: dict, first_pack: bool = False) -> dict:
        """bin/server.py llm_prefill."""
        if status == "sl":
            outputs = self.pipeline.speech_dialogue(self.bridge.feature(feature), **outputs)
        if status == "el":
            self.vad.in_dialog = False
        if status == "cl":
            if outputs["stat"] == "cl":
                outputs = self.pipeline.speech_dialogue(self.bridge.feature(feature), **outputs)
            if first_pack:
                outputs["stat"] = "cl"
            if outputs["stat"] == "el":
                self.vad.in_dialog = False
            if outputs["stat"] == "ss":
                # The server interrupts what it was saying (the client's queue is dropped
                # on barge-in) and starts a new answer.
                self.flush = self.spoke
                self.vad.in_dialog = False
                self._generate(copy.deepcopy(outputs))
        return outputs

    def _generate(self, outputs: dict) -> None:
        """bin/server.py generate() + decoder(), run to the end inside this step."""
        outputs = self.pipeline.speech_dialogue(None, **outputs)
        self.generate_outputs = copy.deepcopy(outputs)
        if outputs.get("stat") != "cs" or "text" not in outputs:
            return
        hidden, cur_text, last_text, generate_num = [outputs["hidden_state"]], "", "", 0
        while len(outputs["past_tokens"]) <= MAX_ANSWER_TOKENS:
            del outputs["text"], outputs["hidden_state"]
            outputs = self.pipeline.speech_dialogue(None, **outputs)
            self.generate_outputs = copy.deepcopy(outputs)
            if outputs["stat"] != "cs":
                break
            hidden.append(outputs["hidden_state"])
            new = outputs["text"][len(last_text):]
            if "\ufffd" in new:
                continue
            self.answer_text += new
            cur_text += new
            ends = PUNCT_FIRST if generate_num == 0 or len(hidden) >= 20 else PUNCT
            if new.endswith(ends) and len(hidden) >= 4 and not (new.endswith(".") and last_text[-1:].isdigit()):
                generate_num = self._voice(hidden, cur_text, generate_num)
                cur_text, hidden = "", []
            last_text = outputs["text"]
        if hidden:
            self._voice(hidden, cur_text, generate_num)

    def _voice(self, hidden, text, generate_num) -> int:
        for seg in self.bridge.synthesize(self.adapter.runtime, hidden, text, generate_num):
            seg = np.asarray(seg, dtype=np.float32).reshape(-1)
            if generate_num == 0:
                loud = np.nonzero(np.abs(seg) > FIRST_SEGMENT_GATE)[0]
                if loud.size:
                    seg = seg[loud[0]:]
            generate_num += 1
            self.answer.append(seg)
        return generate_num

    def close(self) -> None:
        self.closed = True
        self.adapter._closed()
