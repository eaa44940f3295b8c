"""MiniCPM-o 4.5 in duplex mode, driven in-process one 1 s unit per step.

Each step is what the official duplex worker does per `audio_chunk` message:
`streaming_prefill(audio_waveform=<1 s at 16 kHz>)` then `streaming_generate(...)`; the
model says listen (nothing is played) or speak (24 kHz audio and its text). A new
conversation is a new `prepare()` with the system prompt and the reference voice.

The library is reached through a "runtime" dict (see `load_official`): the duplex object,
`ops` (seeding, tensor -> numpy), the default reference voice and the identity. Tests
pass a numpy stand-in through the `factory` config field.
"""

from __future__ import annotations

import hashlib
import json
import re
import wave
from pathlib import Path

import numpy as np

from adapter_kit import (FACTORY, ConfigError, Field, OneConversationAtATime, StepOutput, check_fields,
                         load_runtime, seed_all, whole)

NAME = "minicpm-o"
VERSION = "0.1.0"
# What this adapter was verified against, for README.md and Describe.
VERIFIED = ("a stand-in only: MiniCPM-o's code is not redistributable and needs a GPU; the stand-in's duplex API is "
            "checked point by point against MiniCPM-o-Demo 28b60cf (MiniCPMO45/modeling_minicpmo_unified.py) and a "
            "shipped conversation plays through this plugin on it (make test-adapters); never run on the real model. "
            "Deviations from the demo: the checkpoint's remote code (as_duplex) instead of the demo's copy and "
            "init_unified; no per-unit force_listen, pause or resume; finalize_unit runs before the step returns.")
INPUT_RATE = 16000
OUTPUT_RATE = 24000
FRAME_SIZE = 16000  # one 1 s unit per step, as the demo client sends
PROMPT_PREFIX = "<|im_start|>system\n{text}\n<|audio_start|>"  # DuplexView.prepare in MiniCPM-o-Demo
PROMPT_SUFFIX = "<|audio_end|><|im_end|>"
PROMPT_MARKERS = ("<|im_start|>", "<|im_end|>", "<|audio_start|>", "<|audio_end|>")
DEFAULT_SYSTEM_PROMPT = "Streaming Omni Conversation."
DEFAULT_VOICE = Path("assets") / "HT_ref_audio.wav"  # in the checkpoint snapshot
FORCE_LISTEN_COUNT = 3  # MiniCPM-o-Demo core/schemas/duplex.py DuplexConfig.force_listen_count


SCHEMA = (
    Field("checkpoint", "string", "openbmb/MiniCPM-o-4_5", "Hugging Face repository (or local directory) of the checkpoint."),
    Field("revision", "string", "", "Commit of the checkpoint; empty loads the default branch. The resolved commit is in the identity."),
    Field("device", "string", "cuda", "torch device, e.g. cuda or cuda:1."),
    Field("dtype", "string", "bfloat16", "Weights dtype.", ("bfloat16", "float16", "float32")),
    Field("attn_implementation", "string", "sdpa", "Attention kernel.", ("sdpa", "flash_attention_2", "eager")),
    Field("system_prompt", "string", DEFAULT_SYSTEM_PROMPT,
          "System prompt text (wrapped in the duplex template); a conversation's instruction replaces it."),
    Field("ref_audio", "string", "",
          "Reference voice (LLM voice prompt and TTS voice), any rate and channels librosa reads, resampled to 16 kHz "
          "mono as the demo does; empty uses the checkpoint's assets/HT_ref_audio.wav."),
    Field("temperature", "number", 0.7, "Text sampling temperature."),
    Field("top_k", "number", 20, "Text top-k."),
    Field("top_p", "number", 0.8, "Text top-p."),
    Field("listen_prob_scale", "number", 1.0, "Scales the probability of the listen token (higher: more listening)."),
    Field("max_new_speak_tokens_per_chunk", "number", 20, "Text tokens the model may emit per 1 s unit."),
    Field("decode_mode", "string", "sampling", "Text decoding.", ("sampling", "greedy")),
    Field("force_listen_count", "number", FORCE_LISTEN_COUNT,
          "Units forced to listen at the start of each conversation (the demo's startup protection; 0 disables it)."),
    Field("seed", "number", 0, "Added to each conversation's seed before seeding the sampler."),
    Field("factory", "string", "", "module:function returning the runtime instead of loading the checkpoint (tests)."),
)

_DEVICE = re.compile(r"^(cpu|cuda(:\d+)?)$")


def check_config(config: dict) -> dict:
    out = check_fields(config, SCHEMA)
    if not _DEVICE.match(out["device"]):
        raise ConfigError(f"device: expected cpu, cuda or cuda:N, got {out['device']!r}")
    if not out["temperature"] >= 0:
        raise ConfigError(f"temperature: expected >= 0, got {out['temperature']!r}")
    if not 0 < out["top_p"] <= 1:
        raise ConfigError(f"top_p: expected a value in (0, 1], got {out['top_p']!r}")
    if not out["listen_prob_scale"] > 0:
        raise ConfigError(f"listen_prob_scale: expected > 0, got {out['listen_prob_scale']!r}")
    for name in ("top_k", "max_new_speak_tokens_per_chunk", "seed"):
        if not whole(out[name]) or (name != "seed" and out[name] < 1):
            raise ConfigError(f"{name}: expected a whole number{' >= 1' if name != 'seed' else ''}, got {out[name]!r}")
        out[name] = int(out[name])
    if not whole(out["force_listen_count"]) or out["force_listen_count"] < 0:
        raise ConfigError(f"force_listen_count: expected a whole number >= 0, got {out['force_listen_count']!r}")
    out["force_listen_count"] = int(out["force_listen_count"])
    system_text(out["system_prompt"], "system_prompt")
    if out["factory"] and not FACTORY.match(out["factory"]):
        raise ConfigError(f"factory: expected module:function, got {out['factory']!r}")
    if not out["checkpoint"] and not out["factory"]:
        raise ConfigError("checkpoint: expected a repository id such as openbmb/MiniCPM-o-4_5")
    return out


def system_text(text: str, field: str = "system_prompt", error=ConfigError) -> str:
    """The text that goes inside the duplex template, exactly once. A prompt already
    wrapped in it (the demo's prefix_system_prompt, with or without the suffix) is
    unwrapped; any other template marker is refused, since the model would see it twice."""
    inner = text
    head, tail = PROMPT_PREFIX.split("{text}")
    if inner.startswith(head):
        inner = inner[len(head):]
        for end in (tail + PROMPT_SUFFIX, tail):
            if inner.endswith(end):
                inner = inner[:-len(end)]
                break
    found = [m for m in PROMPT_MARKERS if m in inner]
    if found:
        raise error(f"{field}: contains {', '.join(found)}; give the prompt text only (the adapter wraps it in "
                    f"{PROMPT_PREFIX!r} ... {PROMPT_SUFFIX!r}) or the whole wrapped prompt")
    return inner


def read_wav_16k(path: str, field: str = "ref_audio") -> np.ndarray:
    """A reference voice as 16 kHz mono float32, as the demo reads it (DuplexView._load_ref_audio:
    librosa.load(path, sr=16000, mono=True)). Without librosa only 16 kHz mono 16-bit WAV
    is read (the same samples librosa gives for it)."""
    try:
        import librosa
    except ImportError:
        librosa = None
    if librosa is not None:
        try:
            audio, _ = librosa.load(path, sr=INPUT_RATE, mono=True)
        except Exception as e:  # librosa raises what soundfile or audioread raise
            raise ConfigError(f"{field}: cannot read {path} as audio ({type(e).__name__}: {e})") from e
        audio = np.ascontiguousarray(audio, dtype=np.float32).reshape(-1)
    else:
        audio = _read_wav_16k_without_librosa(path, field)
    if audio.size == 0:
        raise ConfigError(f"{field}: {path} has no samples")
    return audio


def _read_wav_16k_without_librosa(path: str, field: str) -> np.ndarray:
    try:
        with wave.open(path, "rb") as w:
            if w.getframerate() != INPUT_RATE or w.getnchannels() != 1 or w.getsampwidth() != 2:
                raise ConfigError(f"{field}: {path} is {w.getframerate()} Hz, {w.getnchannels()} channel(s), "
                                  f"{8 * w.getsampwidth()}-bit; resampling it needs librosa "
                                  f"(pip install -r requirements.txt), or convert it: sox in.wav -r 16000 -c 1 -b 16 out.wav")
            data = w.readframes(w.getnframes())
    except (OSError, EOFError, wave.Error) as e:
        raise ConfigError(f"{field}: cannot read {path} as a WAV file ({e})") from e
    return np.frombuffer(data[:len(data) // 2 * 2], dtype="<i2").astype(np.float32) / 32768.0  # whole samples


class TorchOps:
    def __init__(self):
        import torch

        self.torch = torch

    def seed(self, seed: int) -> None:
        seed_all(self.torch, seed)

    def to_numpy(self, x) -> np.ndarray:
        if hasattr(x, "detach"):
            x = x.detach().float().cpu().numpy()
        return np.asarray(x, dtype=np.float32).reshape(-1)

    def no_grad(self):
        return self.torch.no_grad()


def load_official(config: dict) -> dict:
    """Loads the checkpoint as the MiniCPM-o README's duplex example does."""
    import torch
    import transformers
    from huggingface_hub import snapshot_download

    local = Path(config["checkpoint"])
    if local.is_dir():
        path, revision = local, config["revision"] or "local"
    else:
        path = Path(snapshot_download(config["checkpoint"], revision=config["revision"] or None))
        revision = path.name  # snapshots/<commit>
    model = transformers.AutoModel.from_pretrained(
        str(path), trust_remote_code=True, attn_implementation=config["attn_implementation"],
        torch_dtype=getattr(torch, config["dtype"]), init_vision=False, init_audio=True, init_tts=True)
    model.eval().to(config["device"])
    model.init_tts()
    default_ref = path / DEFAULT_VOICE
    return {
        "duplex": model.as_duplex(),
        "ops": TorchOps(),
        "default_ref_audio": str(default_ref) if default_ref.exists() else "",
        "identity": {
            "checkpoint": config["checkpoint"],
            "revision": revision,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
        },
    }



class MiniCPMOAdapter(OneConversationAtATime):
    def __init__(self):
        super().__init__()
        self.config: dict | None = None
        self.runtime: dict | None = None
        self.ref_audio: np.ndarray | None = None
        self.ref_audio_path = ""

    def configure(self, config: dict) -> None:
        config = check_config(config)
        if config == self.config:
            return  # already loaded with this config: do not load the weights twice
        self._check_idle()
        self.config = self.runtime = None  # let the old model go before loading a new one
        if config["ref_audio"]:
            read_wav_16k(config["ref_audio"])  # fail before loading 9B parameters
        runtime = load_runtime(config, "checkpoint", {"duplex", "ops", "identity"}, load_official)
        ref = config["ref_audio"] or runtime.get("default_ref_audio", "")
        if not ref:
            # Without a voice the TTS's token2wav cache is never set: the model would
            # answer in text with no audio, which the benchmark scores as silence.
            raise ConfigError(f"ref_audio: empty, and the checkpoint {config['checkpoint']!r} has no default voice "
                              f"({DEFAULT_VOICE}); set ref_audio to a reference voice recording")
        self.ref_audio, self.ref_audio_path = read_wav_16k(ref), ref
        duplex = runtime["duplex"]
        if not hasattr(duplex, "force_listen_count"):
            raise ConfigError("force_listen_count: the checkpoint's duplex object has no force_listen_count; "
                              "this adapter was written against MiniCPM-o-Demo 28b60cf (README.md)")
        duplex.force_listen_count = config["force_listen_count"]
        self.config, self.runtime = config, runtime

    def identity(self) -> dict:
        if self.runtime is None:
            return {}
        ident = dict(self.runtime["identity"])
        ident["dtype"] = self.config["dtype"]
        ident["prompt_template_sha256"] = hashlib.sha256((PROMPT_PREFIX + PROMPT_SUFFIX).encode()).hexdigest()
        ident["system_prompt_sha256"] = hashlib.sha256(self.config["system_prompt"].encode()).hexdigest()
        if self.ref_audio is not None:
            ident["ref_audio_sha256"] = hashlib.sha256(self.ref_audio.tobytes()).hexdigest()
        ident["sampling"] = json.dumps({k: self.config[k] for k in (
            "temperature", "top_k", "top_p", "listen_prob_scale", "max_new_speak_tokens_per_chunk", "decode_mode")},
            sort_keys=True)
        ident["force_listen_count"] = self.config["force_listen_count"]
        return {k: str(v) for k, v in ident.items()}

    def start(self, conversation_id: str, seed: int, instruction: str = "") -> "MiniCPMOConversation":
        if self.runtime is None:
            raise RuntimeError("minicpm-o: Start before Configure")
        seed = (seed + self.config["seed"]) % 2**63
        prompt = system_text(instruction, "instruction", ValueError) if instruction else \
            system_text(self.config["system_prompt"])
        return self._open(NAME, lambda: MiniCPMOConversation(self, conversation_id, seed, prompt))


def needs_finalize(duplex) -> bool:
    """duplex.needs_finalize, a property in the demo's DuplexCapability; a method or an
    absent attribute are handled too."""
    needs = getattr(duplex, "needs_finalize", False)
    return bool(needs() if callable(needs) else needs)


class MiniCPMOConversation:
    input_rate = INPUT_RATE
    output_rate = OUTPUT_RATE
    frame_size = FRAME_SIZE

    def __init__(self, adapter: MiniCPMOAdapter, conversation_id: str, seed: int, prompt_text: str):
        self.adapter = adapter
        self.conversation_id = conversation_id
        self.closed = False
        self.duplex = adapter.runtime["duplex"]
        self.ops = adapter.runtime["ops"]
        self.ops.seed(seed)
        # prepare() runs _reset_streaming_state() and decoder.reset(): a fresh conversation.
        self.duplex.prepare(prefix_system_prompt=PROMPT_PREFIX.format(text=prompt_text),
                            suffix_system_prompt=PROMPT_SUFFIX,
                            ref_audio=adapter.ref_audio,
                            prompt_wav_path=adapter.ref_audio_path or None)
        self.units = 0

    def step(self, frame: np.ndarray) -> StepOutput:
        if self.closed:
            raise RuntimeError(f"conversation {self.conversation_id!r} is closed")
        frame = np.ascontiguousarray(frame, dtype=np.float32).reshape(-1)
        if frame.shape[0] != FRAME_SIZE:
            raise ValueError(f"minicpm-o takes 1 s units of exactly {FRAME_SIZE} samples at {INPUT_RATE} Hz, got {frame.shape[0]}")
        cfg = self.adapter.config
        with self.ops.no_grad():
            pre = self.duplex.streaming_prefill(audio_waveform=frame, frame_list=[])
            if not pre.get("success", False):
                return StepOutput(np.zeros(0, dtype=np.float32))
            r = self.duplex.streaming_generate(
                prompt_wav_path=self.adapter.ref_audio_path or None,
                max_new_speak_tokens_per_chunk=cfg["max_new_speak_tokens_per_chunk"],
                decode_mode=cfg["decode_mode"], temperature=cfg["temperature"], top_k=cfg["top_k"],
                top_p=cfg["top_p"], listen_prob_scale=cfg["listen_prob_scale"])
            # The demo's duplex object defers the end of the unit (terminator, </unit>,
            # sliding window) to finalize_unit(), announced by the needs_finalize
            # property; the next prefill refuses to run before it. A duplex object
            # without it finishes the unit inside streaming_generate.
            if needs_finalize(self.duplex):
                self.duplex.finalize_unit()
        self.units += 1
        if r.get("is_listen", True) or r.get("audio_waveform") is None:
            # Listening yields 1 s of zeros; the demo client does not play it, nor do we.
            return StepOutput(np.zeros(0, dtype=np.float32), text=r.get("text") or "")
        return StepOutput(self.ops.to_numpy(r["audio_waveform"]), text=r.get("text") or "")

    def close(self) -> None:
        self.closed = True
        self.adapter._closed()
