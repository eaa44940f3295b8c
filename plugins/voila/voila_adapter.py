"""Voila-autonomous (preview) driven in-process, one 40 ms frame per step.

Voila ships no real-time code: `infer.py --task-type chat_aiao_auto` tokenizes a whole
user file, and `VoilaAutonomousModel.run_generate` pulls one user audio token from a
Python generator on every step where the model emits an audio token (text steps consume
no input), then decodes everything at the end. This adapter turns that loop into a step
function:

    frame (640 samples, 40 ms at 16 kHz = one Voila audio token)
      -> encode the frame with 1 s of left context (HF Encodec keeps no streaming state),
         keep the newest token row: the user's tokens for this 40 ms
      -> run model steps: text steps append [row | row] and continue; an audio step takes
         the user row ([user K | model K]) and continues while user rows are queued; when
         the model wants audio and none is queued, the sampled row waits for the next frame
      -> decode the new audio rows with 1 s of left context, keep the new samples

`runner` is the model-facing part (VoilaRunner below, torch; a numpy stand-in in tests).
Voila is not on PyPI: it is imported from a checkout (`voila_dir`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
from collections import deque
from pathlib import Path

import numpy as np

from adapter_kit import (FACTORY, ConfigError, Field, OneConversationAtATime, StepOutput, check_fields,
                         load_runtime, seed_all, source_digest, whole)

NAME = "voila"
VERSION = "0.1.0"
# What this adapter was verified against, for README.md and Describe.
VERIFIED = ("Voila 6ba63bf's own code with tiny random models on CPU (make test-adapters): the step function "
            "equals run_generate token for token, and a shipped conversation (hand-08) plays end to end through this "
            "plugin under the real host; never run on a GPU with the real weights. Deviations from infer.py: input "
            "encoded per 40 ms frame with 1 s of context and output decoded per frame (not whole files); the model "
            "waits for input not yet heard; pyannote's speaker checkpoint loads with torch's weights_only off.")

log = logging.getLogger("voila")
INPUT_RATE = 16000
FRAME_SIZE = 640  # tokenize_func.SEG_LEN: one audio token at 25 tokens per second
TOKENS_PER_SECOND = 25


SCHEMA = (
    Field("checkpoint", "string", "maitrix-org/Voila-autonomous-preview", "Hugging Face repository (or directory) of the model."),
    Field("revision", "string", "", "Commit of the checkpoint; empty loads the default branch."),
    Field("audio_tokenizer", "string", "maitrix-org/Voila-Tokenizer", "The Voila audio tokenizer (HF Encodec)."),
    Field("voila_dir", "string", "", "Checkout of github.com/maitrix-org/Voila (not on PyPI); empty imports from PYTHONPATH."),
    Field("ref_audio", "string", "", "Reference voice (any format torchaudio reads); empty uses the checkout's examples/test1.mp3, as infer.py does."),
    Field("speaker_model", "string", "pyannote/wespeaker-voxceleb-resnet34-LM",
          "pyannote.audio model of the voice embedding (spkr.py's default), a Hugging Face id or a checkpoint file."),
    Field("device", "string", "cuda", "torch device (infer.py: cuda), e.g. cuda, cuda:1 or cpu."),
    Field("dtype", "string", "bfloat16", "Weights dtype of the model (infer.py: bfloat16).", ("bfloat16", "float16", "float32")),
    Field("attn_implementation", "string", "flash_attention_2", "Attention kernel (infer.py: flash_attention_2).",
          ("flash_attention_2", "sdpa", "eager")),
    Field("temperature", "number", 0.2, "Text temperature (infer.py)."),
    Field("top_k", "number", 50, "Text top-k."),
    Field("audio_temperature", "number", 0.8, "Audio temperature."),
    Field("audio_top_k", "number", 50, "Audio top-k."),
    Field("context_seconds", "number", 1.0, "Left context for encoding each input frame and decoding each output row."),
    Field("max_steps_per_frame", "number", 64, "Model steps one input frame may run (text runs); the rest waits for the next frame."),
    Field("seed", "number", 0, "Added to each conversation's seed before seeding torch."),
    Field("factory", "string", "", "module:function returning the runtime instead of loading the checkpoint (tests)."),
)



def check_config(config: dict) -> dict:
    out = check_fields(config, SCHEMA)
    for name in ("temperature", "audio_temperature"):
        if not out[name] >= 0:
            raise ConfigError(f"{name}: expected >= 0, got {out[name]!r}")
    for name in ("top_k", "audio_top_k", "max_steps_per_frame", "seed"):
        if not whole(out[name]) or (name != "seed" and out[name] < 1):
            raise ConfigError(f"{name}: expected a whole number{'' if name == 'seed' else ' >= 1'}, got {out[name]!r}")
        out[name] = int(out[name])
    if not 0 <= out["context_seconds"] <= 10:
        raise ConfigError(f"context_seconds: expected 0 to 10, got {out['context_seconds']!r}")
    if out["factory"] and not FACTORY.match(out["factory"]):
        raise ConfigError(f"factory: expected module:function, got {out['factory']!r}")
    if out["voila_dir"] and not (Path(out["voila_dir"]) / "model.py").is_file():
        raise ConfigError(f"voila_dir: {out['voila_dir']} is not a Voila checkout (no model.py)")
    if not _DEVICE.match(out["device"]):
        raise ConfigError(f"device: expected cpu, cuda or cuda:N, got {out['device']!r}")
    if out["attn_implementation"] == "flash_attention_2" and not out["device"].startswith("cuda"):
        raise ConfigError("attn_implementation: flash_attention_2 needs a CUDA device; use sdpa or eager on "
                          f"{out['device']}")
    return out


_DEVICE = re.compile(r"^(cpu|cuda(:\d+)?)$")


class VoilaRunner:
    """One model step of VoilaAutonomousModel.run_generate at a time (torch, CUDA).

    propose() runs the forward pass and samples the next row (text replicated over the
    codebooks, or audio tokens); commit() appends it with the user's row and updates the
    cache, as run_generate does after next(input_generator)."""

    def __init__(self, model, tokenizer, audio_tokenizer, tokenize_func, ref_embs, config, device="cuda",
                 new_cache=None):
        import torch

        self.torch, self.model, self.tokenizer, self.audio_tokenizer = torch, model, tokenizer, audio_tokenizer
        self.device = torch.device(device)
        self.new_cache = new_cache  # transformers' DynamicCache unless given
        self.tokenize_func, self.ref_embs, self.cfg = tokenize_func, ref_embs, config
        self.num_codebooks = model.config.num_codebooks
        self.codebook_size = model.config.codebook_size
        tf = tokenize_func
        self.min_audio_token_id = tokenizer.convert_tokens_to_ids(tf.AUDIO_TOKEN_FORMAT.format(0))
        self.max_audio_token_id = tokenizer.convert_tokens_to_ids(
            tf.AUDIO_TOKEN_FORMAT.format(self.codebook_size * self.num_codebooks - 1))
        self.audio_token_id = tokenizer.convert_tokens_to_ids(tf.DEFAULT_AUDIO_TOKEN)
        self.assistant_token_id = tokenizer.convert_tokens_to_ids(tf.DEFAULT_ASSISTANT_TOKEN)
        self.eos_token_id = tokenizer.eos_token_id
        self.pad_token_id = tokenizer.pad_token_id

    def start(self, instruction: str = "") -> None:
        torch, tf = self.torch, self.tokenize_func
        item = {"instruction": instruction,
                "conversations": [{"from": "user", "audio": {"array": np.zeros(tf.SEG_LEN, np.float32), "sr": tf.AUDIO_SR}},
                                  {"from": "assistant"}]}
        cfg = {"input_type": "autonomous", "task_type": "chat_aiao_auto",
               "num_codebooks": self.num_codebooks, "codebook_size": self.codebook_size}
        # The system prefix exactly as infer.py builds it; the dummy audio's tokens are unused.
        channels, _, _, _ = tf.voila_input_format(item, self.tokenizer, self.audio_tokenizer, cfg)
        ids = [torch.as_tensor([c]).transpose(1, 2).to(self.device) for c in channels]
        self.input_ids = torch.cat(ids, dim=2)  # [1, seq, user K + model K]
        new_cache = self.new_cache
        if new_cache is None:
            from transformers.cache_utils import DynamicCache as new_cache

        self.model_kwargs = {
            "use_cache": True,
            "past_key_values": new_cache(),
            "attention_mask": self.model._prepare_attention_mask_for_generation(
                self.input_ids, self.pad_token_id, self.eos_token_id),
        }
        self.speaking = False
        self.pending = None

    def propose(self):
        if self.pending is not None:
            return self.pending[:2]
        torch, model, cfg = self.torch, self.model, self.cfg
        inputs = model._prepare_inputs_for_generation(self.input_ids, ref_embs=self.ref_embs,
                                                      ref_embs_mask=self.ref_embs_mask, **self.model_kwargs)
        outputs = model(**inputs, return_dict=True)
        audio = model.audio_transformer.inference(outputs.last_hidden_state, temperature=cfg["audio_temperature"],
                                                  top_k=cfg["audio_top_k"])
        audio = torch.stack([audio[:, :, ci] + self.min_audio_token_id + ci * self.codebook_size
                             for ci in range(self.num_codebooks)], dim=2)
        logits = outputs.logits[:, -1, :]
        head = int(torch.argmax(outputs.voila_pred[:, -1, :], dim=-1).cpu()[0].item())
        if cfg["temperature"] > 0:
            logits = logits / cfg["temperature"]
        k = min(cfg["top_k"], logits.size(-1))
        logits = logits.masked_fill(logits < torch.topk(logits, k)[0][..., -1, None], -float("inf"))
        token = torch.multinomial(torch.nn.functional.softmax(logits, dim=-1), num_samples=1).squeeze(1)
        if head == 1 and not self.speaking:
            token[0] = self.assistant_token_id
            self.speaking = True
        elif int(token[0]) == self.eos_token_id:
            self.speaking = False
        row = token[:, None, None].expand(-1, 1, self.num_codebooks)
        is_audio = bool((row == self.audio_token_id)[0, 0, 0].item())
        if is_audio:
            row = audio
        self.model_kwargs = model._update_model_kwargs_for_generation(outputs, self.model_kwargs)
        self.pending = (row[0, 0].cpu().numpy().astype(np.int64), is_audio, row)
        return self.pending[:2]

    @property
    def ref_embs_mask(self):
        return None if self.ref_embs is None else self.torch.tensor([1], device=self.device)

    def commit(self, user_row) -> None:
        _, is_audio, row = self.pending
        user = self.torch.as_tensor(user_row, device=row.device)[None, None, :] if is_audio else row
        self.input_ids = self.torch.cat([self.input_ids, self.torch.cat([user, row], dim=2)], dim=1)
        self.pending = None


class TorchOps:
    def __init__(self):
        import torch

        self.torch = torch

    def seed(self, seed: int) -> None:
        seed_all(self.torch, seed)

    def no_grad(self):
        return self.torch.inference_mode()


class AudioTokenizerNumpy:
    """VoilaTokenizer with numpy in and out."""

    def __init__(self, tokenizer):
        self.inner = tokenizer
        self.sampling_rate = tokenizer.sampling_rate

    def encode(self, wav, sr):
        return self.inner.encode(wav, sr).cpu().numpy().astype(np.int64)

    def decode(self, codes):
        import torch

        return self.inner.decode(torch.as_tensor(codes, device=self.inner.device)).float().cpu().numpy()



def _snapshot(repo: str, revision: str) -> tuple[Path, str]:
    """A local directory as is, else the Hugging Face snapshot (downloaded if needed) and
    its commit, so the identity records what was really loaded."""
    if Path(repo).is_dir():
        return Path(repo), revision or "local"
    from huggingface_hub import snapshot_download

    path = Path(snapshot_download(repo, revision=revision or None))
    return path, path.name

@contextlib.contextmanager
def pickled_checkpoints():
    """pyannote.audio 3.3.2 checkpoints pickle torch's TorchVersion and pyannote's own
    classes (Specifications, Problem, Resolution); since torch 2.6 torch.load defaults to
    weights_only=True and refuses them, so spkr.SpeakerEmbedding fails to load its model.
    TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD restores the default pyannote 3.3 was written for,
    only while the speaker model (a checkpoint the config names) loads."""
    old = os.environ.get("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"
    try:
        yield
    finally:
        if old is None:
            del os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"]
        else:
            os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = old


def default_ref_audio(tokenize_func) -> Path:
    """infer.py's --ref-audio default, examples/test1.mp3 in the checkout Voila is imported from."""
    return Path(tokenize_func.__file__).resolve().parent / "examples" / "test1.mp3"


def load_official(config: dict) -> dict:
    """Loads the model as infer.py load_model() does (on config's device, dtype and
    attention kernel), plus the reference voice embedding as infer.py makes it."""
    voila_dir = Path(config["voila_dir"]).resolve() if config["voila_dir"] else None
    if voila_dir:
        sys.path.insert(0, str(voila_dir))
    import torch
    import torchaudio
    import transformers
    import tokenize_func
    from model import VoilaAutonomousModel
    from spkr import SpeakerEmbedding
    from voila_tokenizer import VoilaTokenizer

    checkout = Path(tokenize_func.__file__).resolve().parent
    ref = config["ref_audio"] or str(default_ref_audio(tokenize_func))
    if not Path(ref).is_file():
        # Without a voice infer.py's audio tasks have no speaker embedding; never run so silently.
        raise ConfigError(f"ref_audio: {ref} does not exist" + ("" if config["ref_audio"] else
                          f" (the default, infer.py's examples/test1.mp3 in {checkout}); set ref_audio to a voice recording"))
    device = config["device"]
    model_path, revision = _snapshot(config["checkpoint"], config["revision"])
    codec_path, codec_revision = _snapshot(config["audio_tokenizer"], "")
    model = VoilaAutonomousModel.from_pretrained(str(model_path), torch_dtype=getattr(torch, config["dtype"]),
                                                 attn_implementation=config["attn_implementation"], use_cache=True)
    model = model.to(device).eval()
    tokenizer = transformers.AutoTokenizer.from_pretrained(str(model_path))
    audio_tokenizer = VoilaTokenizer(model_path=str(codec_path), device=device)
    wav, sr = torchaudio.load(ref)
    with pickled_checkpoints():
        speaker = SpeakerEmbedding(model_path=config["speaker_model"], device=device)
    ref_embs = speaker(wav, sr)
    runner = VoilaRunner(model, tokenizer, audio_tokenizer, tokenize_func, ref_embs, config, device=device)
    return {
        "runner": runner,
        "audio_tokenizer": AudioTokenizerNumpy(audio_tokenizer),
        "text_tokenizer": tokenizer,
        "ops": TorchOps(),
        "identity": {
            "checkpoint": config["checkpoint"],
            "revision": revision,
            "audio_tokenizer": f"{config['audio_tokenizer']}@{codec_revision}",
            "speaker_model": config["speaker_model"],
            "ref_audio": ref,
            "voila_code": source_digest(checkout, ("model.py", "audio_transformer.py", "tokenize_func.py",
                                                  "voila_tokenizer.py", "spkr.py")),
            "device": device,
            "dtype": config["dtype"],
            "attn_implementation": config["attn_implementation"],
            "transformers": transformers.__version__,
            "torch": torch.__version__,
        },
    }



class ContextEncoder:
    """Encodes each 40 ms frame with up to `context` samples before it and keeps the newest
    token row: HF Encodec has no streaming state, so context stands in for it."""

    def __init__(self, tokenizer, context: int):
        self.tokenizer, self.context = tokenizer, context
        self.history = np.zeros(0, np.float32)

    def push(self, frame: np.ndarray) -> np.ndarray:
        window = np.concatenate([self.history, frame])
        codes = self.tokenizer.encode(window, INPUT_RATE)
        self.history = window[-self.context:] if self.context else np.zeros(0, np.float32)
        return codes[:, -1]


class ContextDecoder:
    """Decodes new rows of codes with up to `context` earlier rows and keeps the new samples."""

    def __init__(self, tokenizer, context_rows: int):
        self.tokenizer, self.context_rows = tokenizer, context_rows
        self.history = None

    def push(self, codes: np.ndarray) -> np.ndarray:
        if codes.shape[1] == 0:
            return np.zeros(0, np.float32)
        window = codes if self.history is None else np.concatenate([self.history, codes], axis=1)
        wav = np.asarray(self.tokenizer.decode(window), dtype=np.float32).reshape(-1)
        per_row = wav.shape[0] // window.shape[1]
        self.history = window[:, -self.context_rows:] if self.context_rows else None
        return wav[-codes.shape[1] * per_row:]


class VoilaAdapter(OneConversationAtATime):
    def __init__(self):
        super().__init__()
        self.config: dict | None = None
        self.runtime: dict | None = None

    def configure(self, config: dict) -> None:
        config = check_config(config)
        if config == self.config:
            return  # already loaded with this config: do not load the weights twice
        self._check_idle()
        self.config = self.runtime = None  # let the old model go before loading a new one
        runtime = load_runtime(config, "checkpoint", {"runner", "audio_tokenizer", "text_tokenizer", "ops", "identity"},
                               load_official)
        tok = runtime["audio_tokenizer"]
        probe = tok.encode(np.zeros(INPUT_RATE, np.float32), INPUT_RATE)
        if probe.shape[-1] != TOKENS_PER_SECOND:
            raise ConfigError(f"audio_tokenizer: gives {probe.shape[-1]} tokens per second; this adapter assumes "
                              f"{TOKENS_PER_SECOND} (tokenize_func.SEG_LEN = 640 at 16 kHz)")
        self.config, self.runtime = config, runtime

    @property
    def output_rate(self) -> int:
        return int(self.runtime["audio_tokenizer"].sampling_rate)

    def identity(self) -> dict:
        if self.runtime is None:
            return {}
        ident = dict(self.runtime["identity"])
        ident["sampling"] = json.dumps({k: self.config[k] for k in (
            "temperature", "top_k", "audio_temperature", "audio_top_k")}, sort_keys=True)
        ident["context_seconds"] = self.config["context_seconds"]
        return {k: str(v) for k, v in ident.items()}

    def start(self, conversation_id: str, seed: int, instruction: str = "") -> "VoilaConversation":
        if self.runtime is None:
            raise RuntimeError("voila: Start before Configure")
        seed = (seed + self.config["seed"]) % 2**63
        return self._open(NAME, lambda: VoilaConversation(self, conversation_id, seed, instruction))


class VoilaConversation:
    input_rate = INPUT_RATE
    frame_size = FRAME_SIZE

    def __init__(self, adapter: VoilaAdapter, conversation_id: str, seed: int, instruction: str):
        self.adapter = adapter
        self.conversation_id = conversation_id
        self.closed = False
        rt, cfg = adapter.runtime, adapter.config
        self.output_rate = adapter.output_rate
        self.runner, self.ops, self.text_tokenizer = rt["runner"], rt["ops"], rt["text_tokenizer"]
        self.ops.seed(seed)
        with self.ops.no_grad():
            self.runner.start(instruction)  # a fresh system prefix and a new DynamicCache
        rows = int(round(cfg["context_seconds"] * TOKENS_PER_SECOND))  # whole tokens keep frames aligned
        self.encoder = ContextEncoder(rt["audio_tokenizer"], rows * FRAME_SIZE)
        self.decoder = ContextDecoder(rt["audio_tokenizer"], rows)
        self.user_rows: deque = deque()
        # Model steps taken (rows committed), for the log at close: the steps per 40 ms
        # frame are what a GPU must keep up with in real time.
        self.frames = self.audio_steps = self.text_steps = 0

    def step(self, frame: np.ndarray) -> StepOutput:
        if self.closed:
            raise RuntimeError(f"conversation {self.conversation_id!r} is closed")
        frame = np.ascontiguousarray(frame, dtype=np.float32).reshape(-1)
        if frame.shape[0] != FRAME_SIZE:
            raise ValueError(f"voila takes frames of exactly {FRAME_SIZE} samples at {INPUT_RATE} Hz, got {frame.shape[0]}")
        r = self.runner
        audio_rows, text_ids = [], []
        with self.ops.no_grad():
            user = self.encoder.push(frame)
            # _wrapper_audio_tokens_autonomous: codebook n's code c becomes min_id + n * size + c.
            offsets = r.min_audio_token_id + np.arange(r.num_codebooks) * r.codebook_size
            self.user_rows.append(user[:r.num_codebooks].astype(np.int64) + offsets)
            self.frames += 1
            for _ in range(self.adapter.config["max_steps_per_frame"]):
                row, is_audio = r.propose()
                if is_audio:
                    if not self.user_rows:
                        break  # run_generate would block in next(input_generator): wait for the next frame
                    r.commit(self.user_rows.popleft())
                    self.audio_steps += 1
                else:
                    r.commit(None)
                    self.text_steps += 1
                # What the model said, read as infer.py eval_model reads run_generate's output:
                # a row whose first id is an audio token is audio codes, anything else but
                # EOS is text.
                if r.min_audio_token_id <= int(row[0]) <= r.max_audio_token_id:
                    audio_rows.append((row - r.min_audio_token_id) % r.codebook_size)
                elif int(row[0]) != r.eos_token_id:
                    text_ids.append(int(row[0]))
        codes = np.stack(audio_rows, axis=1) if audio_rows else np.zeros((r.num_codebooks, 0), np.int64)
        samples = self.decoder.push(codes)
        text = self.text_tokenizer.decode(text_ids, skip_special_tokens=True) if text_ids else ""
        return StepOutput(samples=samples, text=text)

    def close(self) -> None:
        if not self.closed:
            log.info("conversation closed", extra={
                "conversation": self.conversation_id, "frames": self.frames, "audio_steps": self.audio_steps,
                "text_steps": self.text_steps,
                "steps_per_frame": round((self.audio_steps + self.text_steps) / max(self.frames, 1), 3)})
        self.closed = True
        self.adapter._closed()
