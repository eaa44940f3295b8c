"""FLM-Audio driven in-process, one 80 ms frame per step: Mimi encode -> LMGen.step -> decode.

FLM-Audio (cofe-ai/flm-audio) is a Moshi fork with a Qwen2-sized HF backbone; its server
(flmaudio/server.py) runs the same per-frame loop as Moshi's, without Moshi's first-frame
Mimi reset, and streams text through a HF streamer that closes a segment on the model's
"wait" token. This module reproduces that loop without Opus and the WebSocket; plugin.py
binds it to the duplexmpe Python SDK.

`flmaudio` is not on PyPI: it is imported from a checkout of the repository (the
`flmaudio_dir` config field, or PYTHONPATH). At 41d768c `flmaudio` is a namespace package
(no `flmaudio/__init__.py`); the checkout is found from `flmaudio.models`, which is a
regular package. Tests pass a stand-in or a tiny model through `factory`.

Upstream's in-repository model is inconsistent at 41d768c: `LMGen.depformer_step` calls
`forward_audio(transformer_output_states=, audio_input_ids=)`, but
`FLMAudioForCausalLM.forward_audio` also requires `step` and `kv_cache` and passes all four
to `DepthGPT.forward`, which takes two. `bridge_forward_audio` routes the call LMGen makes
to the two-argument DepthGPT call; README.md gives the evidence for that reading.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from adapter_kit import (FACTORY, ConfigError, Field, OneConversationAtATime, StepOutput, TorchOps, check_fields,
                         load_runtime, mimi_lm_step, whole)

NAME = "flm-audio"
VERSION = "0.2.0"
SAMPLE_RATE = 24000
FRAME_SIZE = 1920
TEXT_PAD_IDS = (0, 3)
WARMUP_FRAMES = 4  # what ServerState.warmup runs before serving


SCHEMA = (
    Field("checkpoint", "string", "CofeAI/FLM-Audio", "Hugging Face repository (or local directory) holding the LM, Mimi and tokenizer."),
    Field("revision", "string", "", "Commit of the checkpoint; empty loads the default branch. The resolved commit is in the identity."),
    Field("flmaudio_dir", "string", "",
          "Checkout of github.com/cofe-ai/flm-audio (the flmaudio package is not on PyPI); empty imports flmaudio from PYTHONPATH."),
    Field("device", "string", "cuda", "torch device, e.g. cuda or cuda:1."),
    Field("dtype", "string", "bfloat16", "Weights dtype of the LM.", ("bfloat16", "float16", "float32")),
    Field("model_code", "string", "repository",
          "Which FLMAudioForCausalLM loads the weights: the checkout's flmaudio.models (repository, what 41d768c's "
          "server does) or the code shipped with the checkpoint through trust_remote_code (checkpoint, what the "
          "server did before 41ab09e).", ("repository", "checkpoint")),
    Field("temp_audio", "number", None, "Audio temperature; null keeps the library default (0.5)."),
    Field("temp_text", "number", None, "Text temperature; null keeps the default (0.01)."),
    Field("top_k_audio", "number", None, "Audio top-k; null keeps the default (1)."),
    Field("top_k_text", "number", None, "Text top-k; null keeps the default (1)."),
    Field("top_p_audio", "number", None, "Audio top-p; null keeps the default (0.9)."),
    Field("top_p_text", "number", None, "Text top-p; null keeps the default (0.9)."),
    Field("repetition_penalty_audio", "number", None, "Audio repetition penalty; null keeps the default (1.2)."),
    Field("repetition_penalty_text", "number", None, "Text repetition penalty; null keeps the default (1.03)."),
    Field("warmup", "bool", True, "Run 4 frames of faint noise after loading, as the server does (triggers torch.compile)."),
    Field("seed", "number", 0, "Added to each conversation's seed before seeding the sampler."),
    Field("factory", "string", "", "module:function returning the runtime instead of loading the checkpoint (tests)."),
)

_SAMPLING = ("temp_audio", "temp_text", "top_k_audio", "top_k_text", "top_p_audio", "top_p_text",
             "repetition_penalty_audio", "repetition_penalty_text")
_DEVICE = re.compile(r"^(cpu|cuda(:\d+)?)$")


def check_config(config: dict) -> dict:
    out = check_fields(config, SCHEMA)
    if not _DEVICE.match(out["device"]):
        raise ConfigError(f"device: expected cpu, cuda or cuda:N, got {out['device']!r}")
    for name in ("temp_audio", "temp_text"):
        if out[name] is not None and not out[name] >= 0:
            raise ConfigError(f"{name}: expected a temperature >= 0, got {out[name]!r}")
    for name in ("top_k_audio", "top_k_text"):
        if out[name] is not None:
            if out[name] < 1 or not whole(out[name]):
                raise ConfigError(f"{name}: expected a whole number >= 1, got {out[name]!r}")
            out[name] = int(out[name])
    for name in ("top_p_audio", "top_p_text"):
        if out[name] is not None and not 0 < out[name] <= 1:
            raise ConfigError(f"{name}: expected a value in (0, 1], got {out[name]!r}")
    for name in ("repetition_penalty_audio", "repetition_penalty_text"):
        if out[name] is not None and not out[name] > 0:
            raise ConfigError(f"{name}: expected a value > 0, got {out[name]!r}")
    if not whole(out["seed"]):
        raise ConfigError(f"seed: expected a whole number, got {out['seed']!r}")
    out["seed"] = int(out["seed"])
    if out["factory"] and not FACTORY.match(out["factory"]):
        raise ConfigError(f"factory: expected module:function, got {out['factory']!r}")
    if out["flmaudio_dir"] and not (Path(out["flmaudio_dir"]) / "flmaudio" / "models").is_dir():
        raise ConfigError(f"flmaudio_dir: {out['flmaudio_dir']} is not a checkout of cofe-ai/flm-audio "
                          "(no flmaudio/models in it)")
    return out


def _git_head(repo: Path) -> str:
    """The checkout's commit: git if it can tell, else .git/HEAD read by hand, else the
    commit an UPSTREAM file names ("owner/name <commit> <date>", as a vendored snapshot
    records it), else "unknown"."""
    try:
        out = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
        if out.returncode == 0 and re.fullmatch(r"[0-9a-f]{40}", out.stdout.strip()):
            return out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    head = repo / ".git" / "HEAD"
    try:
        ref = head.read_text().strip()
        if ref.startswith("ref: "):
            return (repo / ".git" / ref[5:]).read_text().strip()
        return ref
    except OSError:
        pass
    try:
        fields = (repo / "UPSTREAM").read_text().split()
        if len(fields) >= 2 and re.fullmatch(r"[0-9a-f]{7,40}", fields[1]):
            return fields[1]
    except OSError:
        pass
    return "unknown"


def checkout_of(models_module) -> Path:
    """The checkout holding `flmaudio`, from flmaudio.models (a regular package, unlike
    flmaudio itself at 41d768c, which has no __init__.py and so no __file__)."""
    return Path(models_module.__file__).resolve().parent.parent.parent


def code_digest(package_dir: Path) -> str:
    """SHA-256 over the package's .py files (relative name and content): what the
    identity records of the code, whatever its commit says."""
    h = hashlib.sha256()
    for path in sorted(package_dir.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        h.update(path.relative_to(package_dir).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return "sha256:" + h.hexdigest()


def _check_loading_info(info: dict, path: Path) -> None:
    """A checkpoint whose tensors do not fill the model (or that holds tensors the model
    has no place for) would run with random weights and be scored as the model."""
    missing, unexpected = list(info.get("missing_keys") or []), list(info.get("unexpected_keys") or [])
    mismatched = [k for k, *_ in info.get("mismatched_keys") or []]
    if not (missing or unexpected or mismatched):
        return
    parts = []
    for what, keys in (("missing from the checkpoint", missing), ("in the checkpoint but not in the model", unexpected),
                       ("of another shape in the checkpoint", mismatched)):
        if keys:
            parts.append(f"{len(keys)} {what} (e.g. {', '.join(sorted(keys)[:3])})")
    raise ConfigError(f"checkpoint: {path} does not match the FLMAudioForCausalLM that loaded it: {'; '.join(parts)}. "
                      "The weights would be partly random. Check model_code (repository or checkpoint) and that "
                      "flmaudio_dir is the commit this checkpoint was released with.")


def load_official(config: dict) -> dict:
    """Loads the checkpoint as flmaudio/server.py main() does at 41d768c (model_code
    "repository"), or through trust_remote_code as it did before 41ab09e ("checkpoint")."""
    import torch
    import transformers
    import flmaudio.models
    from flmaudio.models import FLMAudioForCausalLM, LMGen, loaders
    from huggingface_hub import snapshot_download

    local = Path(config["checkpoint"])
    if local.is_dir():
        path, revision = local, config["revision"] or "local"
    else:
        path = Path(snapshot_download(config["checkpoint"], revision=config["revision"] or None))
        revision = path.name
    remote = config["model_code"] == "checkpoint"
    mimi = loaders.get_mimi(str(path), config["device"])
    model_class = transformers.AutoModelForCausalLM if remote else FLMAudioForCausalLM
    extra = {"trust_remote_code": True} if remote else {}
    lm, info = model_class.from_pretrained(str(path), device_map=config["device"], torch_dtype=getattr(torch, config["dtype"]),
                                           low_cpu_mem_usage=True, output_loading_info=True, **extra)
    _check_loading_info(info, path)
    repo = checkout_of(flmaudio.models)
    return {
        "mimi": mimi,
        "lm": lm,
        "lm_gen_class": LMGen,
        "tokenizer": transformers.AutoTokenizer.from_pretrained(str(path), **extra),
        "ops": TorchOps(config["device"]),
        "identity": {
            "checkpoint": config["checkpoint"],
            "revision": revision,
            "library": f"flmaudio {_git_head(repo)}",
            "flmaudio_code": code_digest(repo / "flmaudio"),
            "model_code": config["model_code"],
            "transformers": transformers.__version__,
            "torch": torch.__version__,
        },
    }


def bridge_forward_audio(lm) -> str:
    """Makes lm.forward_audio take the call LMGen.depformer_step makes, when it does not.

    At 41d768c LMGen calls forward_audio(transformer_output_states=, audio_input_ids=),
    while FLMAudioForCausalLM.forward_audio(transformer_output_states, audio_input_ids,
    step, kv_cache) hands all four to DepthGPT.forward(main_hidden_states,
    audio_token_ids): no call of it can succeed. When forward_audio wants more than the
    two arguments and the depth transformer takes exactly two, forward_audio becomes the
    two-argument call to it. Returns what was done, for the identity."""
    forward_audio = getattr(lm, "forward_audio", None)
    depth = getattr(lm, "aud_output_layers", None)
    if forward_audio is None or depth is None:
        return "not an FLMAudioForCausalLM"
    given = {"transformer_output_states", "audio_input_ids"}
    extra = [p.name for p in inspect.signature(forward_audio).parameters.values()
             if p.default is p.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in given]
    if not extra:
        return "as shipped"
    depth_params = [p for p in inspect.signature(depth.forward).parameters.values()
                    if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(depth_params) != 2:
        raise ConfigError(f"flmaudio_dir: this flmaudio's forward_audio requires {', '.join(extra)}, "
                          "which LMGen does not pass, and its depth transformer does not take the two arguments "
                          "this adapter knows how to bridge; see plugins/flm-audio/README.md")

    def two_argument_forward_audio(transformer_output_states, audio_input_ids):
        return depth(transformer_output_states, audio_input_ids)

    lm.forward_audio = two_argument_forward_audio
    return (f"bridged: LMGen's forward_audio(transformer_output_states, audio_input_ids) goes to "
            f"aud_output_layers({', '.join(p.name for p in depth_params)}); the model's own forward_audio "
            f"also requires {', '.join(extra)}")


class TextSegment:
    """What the server's AsyncTextIteratorStreamer does for one segment: decode the tokens
    so far and hand out only the new characters; the wait token ends the segment."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.ids: list[int] = []
        self.sent = 0

    def put(self, token: int) -> str:
        self.ids.append(token)
        text = self.tokenizer.decode(self.ids)
        if text.endswith("\ufffd"):  # an incomplete multi-byte character: wait for more
            return ""
        new, self.sent = text[self.sent:], len(text)
        return new

    def end(self) -> str:
        self.ids, self.sent = [], 0
        return "\n"


class FLMAudioAdapter(OneConversationAtATime):
    def __init__(self):
        super().__init__()
        self.config: dict | None = None
        self.runtime: dict | None = None
        self.lm_gen = None

    def configure(self, config: dict) -> None:
        config = check_config(config)
        if config == self.config:
            return  # already loaded with this config: do not load the weights twice
        self._check_idle()
        self.config = self.runtime = self.lm_gen = None  # let the old model go before loading a new one
        if config["flmaudio_dir"]:
            checkout = str(Path(config["flmaudio_dir"]).resolve())
            if checkout not in sys.path:
                sys.path.insert(0, checkout)
        runtime = load_runtime(config, "checkpoint", {"mimi", "lm", "lm_gen_class", "tokenizer", "ops", "identity"},
                               load_official)
        runtime["identity"] = {**runtime["identity"], "forward_audio": bridge_forward_audio(runtime["lm"])}
        sampling = {k: config[k] for k in _SAMPLING if config[k] is not None}
        self.lm_gen = runtime["lm_gen_class"](runtime["lm"], **sampling)
        runtime["mimi"].streaming_forever(1)
        self.lm_gen.streaming_forever(1)
        self.config, self.runtime = config, runtime
        if config["warmup"]:
            self._warmup()

    def _warmup(self) -> None:
        ops, mimi = self.runtime["ops"], self.runtime["mimi"]
        noise = np.random.default_rng(0)
        with ops.no_grad():
            for _ in range(WARMUP_FRAMES):
                chunk = ((noise.random((1, 1, FRAME_SIZE)) - 0.5) * 0.002).astype(np.float32)
                codes = mimi.encode(ops.from_numpy(chunk))
                for c in range(codes.shape[-1]):
                    tokens = self.lm_gen.step(codes[:, :, c:c + 1])
                    if tokens is not None:
                        mimi.decode(tokens[:, 1:])

    def identity(self) -> dict:
        if self.runtime is None:
            return {}
        ident = dict(self.runtime["identity"])
        ident["dtype"] = self.config["dtype"]
        ident["sampling"] = json.dumps({k: getattr(self.lm_gen, k, None) for k in _SAMPLING}, sort_keys=True)
        return {k: str(v) for k, v in ident.items()}

    def start(self, conversation_id: str, seed: int, instruction: str = "") -> "FLMAudioConversation":
        if self.runtime is None:
            raise RuntimeError("flm-audio: Start before Configure")
        if instruction:
            raise ValueError("flm-audio has no text instruction (it only hears the spoken preamble); "
                             "remove the instruction from the run file for this model")
        seed = (seed + self.config["seed"]) % 2**63
        return self._open(NAME, lambda: FLMAudioConversation(self, conversation_id, seed))


class FLMAudioConversation:
    input_rate = SAMPLE_RATE
    output_rate = SAMPLE_RATE
    frame_size = FRAME_SIZE

    def __init__(self, adapter: FLMAudioAdapter, conversation_id: str, seed: int):
        self.adapter = adapter
        self.conversation_id = conversation_id
        self.closed = False
        rt = adapter.runtime
        self.mimi, self.lm_gen, self.ops = rt["mimi"], adapter.lm_gen, rt["ops"]
        self.wait_token = rt["lm"].config.mm_token_info.text_wait_token_id
        self.segment = TextSegment(rt["tokenizer"])
        # handle_chat resets both for each connection. _LMGenState.reset also zeroes the
        # initial-token slot; that is the shipped behaviour and is kept.
        self.mimi.reset_streaming()
        self.lm_gen.reset_streaming()
        self.ops.seed(seed)

    def step(self, frame: np.ndarray) -> StepOutput:
        if self.closed:
            raise RuntimeError(f"conversation {self.conversation_id!r} is closed")
        frame = np.asarray(frame, dtype=np.float32).reshape(-1)
        if frame.shape[0] != FRAME_SIZE:
            raise ValueError(f"flm-audio takes frames of exactly {FRAME_SIZE} samples at {SAMPLE_RATE} Hz, got {frame.shape[0]}")
        with self.ops.no_grad():
            codes = self.mimi.encode(self.ops.from_numpy(frame[None, None, :]))
            samples, tokens = mimi_lm_step(self.mimi, self.lm_gen, self.ops, codes)
        text = [self.segment.end() if t == self.wait_token else self.segment.put(t)
                for t in tokens if t not in TEXT_PAD_IDS]
        return StepOutput(samples=samples, text="".join(text))

    def close(self) -> None:
        self.closed = True
        self.adapter._closed()
