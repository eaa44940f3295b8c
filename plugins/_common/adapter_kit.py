"""What the five Python model adapters (plugins/moshi, flm-audio, minicpm-o, voila,
freeze-omni) share on the model side: config fields and their generic checks, the
`factory` hook and loader error wrapping, per-conversation seeding, the step output, and
the one-conversation-at-a-time rule. Each adapter module imports it; plugin.py and the
tests put this directory on sys.path.

Nothing here knows a model: the checks that depend on the model's fields stay in each
adapter's check_config.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import math
import random
import re
import threading
import time
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

FACTORY = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")

class ConfigError(ValueError):
    """An invalid config value; the message names the field and what is expected."""


@dataclass(frozen=True)
class Field:
    name: str
    type: str  # "string", "number", "bool"
    default: Any
    description: str
    allowed: tuple = ()


def whole(value) -> bool:
    return math.isfinite(value) and value == int(value)


def check_fields(config: dict, schema: tuple[Field, ...]) -> dict:
    """The checks every adapter's check_config starts with: config is an object of known
    fields, each of its declared type (a field whose default is None may be null: the
    library's default) and, where the field lists allowed values, one of them. Returns
    config with defaults filled in, or raises ConfigError naming the field."""
    if not isinstance(config, dict):
        raise ConfigError(f"config must be an object, got {type(config).__name__}")
    known = {f.name: f for f in schema}
    unknown = sorted(set(config) - set(known))
    if unknown:
        raise ConfigError(f"unknown config field(s) {', '.join(unknown)}; known: {', '.join(known)}")
    out = {}
    for f in schema:
        value = config.get(f.name, f.default)
        if value is None and f.default is None:  # nullable: keep the library's default
            out[f.name] = None
            continue
        if f.type == "string" and not isinstance(value, str):
            raise ConfigError(f"{f.name}: expected a string, got {value!r}")
        if f.type == "number" and (isinstance(value, bool) or not isinstance(value, (int, float))):
            raise ConfigError(f"{f.name}: expected a number, got {value!r}")
        if f.type == "bool" and not isinstance(value, bool):
            raise ConfigError(f"{f.name}: expected true or false, got {value!r}")
        if f.allowed and value not in f.allowed:
            raise ConfigError(f"{f.name}: expected one of {', '.join(f.allowed)}, got {value!r}")
        out[f.name] = value
    return out


def resolve_factory(spec: str) -> Callable[[dict], dict]:
    """The function a `factory` field ("module:function") names."""
    module_name, func = spec.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ConfigError(f"factory: cannot import {module_name!r} ({e}); is it on PYTHONPATH?") from e
    if not hasattr(module, func):
        raise ConfigError(f"factory: {module_name} has no function {func!r}")
    return getattr(module, func)


class LoadError(ConfigError):
    """The loader (the official one or a factory) failed. `kind` says what failed:
    "import", "file", "shape", "cuda" or "loader"; the message carries the hint for that
    kind and the innermost frames of the traceback."""

    def __init__(self, message: str, kind: str):
        super().__init__(message)
        self.kind = kind


_HINTS = {
    "import": ("a module the model code needs is missing or broken: install the adapter's requirements.txt "
               "from its directory (cd plugins/<adapter> && pip install -r requirements.txt), and check the "
               "field that points at an upstream checkout"),
    "file": ("a file or download failed: check the path or the repository name and revision, the network, or "
             "HF_HUB_OFFLINE=1 with the files in the Hugging Face cache"),
    "shape": "the weights do not fit the model code: a checkpoint of another version or size of the model?",
    "cuda": ("the GPU failed: check the device field, that torch sees the GPU (torch.cuda.is_available()) "
             "and that it has enough free memory"),
    "loader": "see the traceback",
}
_TITLES = {"import": "Import", "file": "File", "shape": "Shape", "cuda": "CUDA", "loader": "Loading"}
_HUB_ERRORS = {"RepositoryNotFoundError", "RevisionNotFoundError", "EntryNotFoundError", "LocalEntryNotFoundError",
               "GatedRepoError", "HFValidationError", "OfflineModeIsEnabled", "HfHubHTTPError", "ConnectionError",
               "Timeout", "ReadTimeout", "ConnectTimeout"}
_CUDA = re.compile(r"\bCUDA\b|\bcuda\b|cuDNN|cudnn|NCCL|out of memory|no kernel image|Torch not compiled with CUDA|"
                   r"flash_attn|FlashAttention", re.IGNORECASE)
_SHAPE = re.compile(r"size mismatch|shape mismatch|Error\(s\) in loading state_dict|mat1 and mat2 shapes|"
                    r"must match the size|shape '\[.*\]' is invalid|Missing key\(s\)|Unexpected key\(s\)")
TRACEBACK_FRAMES = 8  # innermost frames of the loader's traceback kept in the message
MESSAGE_LIMIT = 6000


def failure_kind(e: BaseException) -> str:
    """What a loader exception says failed: "import", "file", "shape", "cuda" or "loader"."""
    names = {c.__name__ for c in type(e).__mro__}
    text = f"{type(e).__name__}: {e}"
    if isinstance(e, ImportError):
        return "import"
    if "OutOfMemoryError" in names or "AcceleratorError" in names or _CUDA.search(text):
        return "cuda"
    if isinstance(e, (RuntimeError, ValueError)) and _SHAPE.search(text):
        return "shape"
    if isinstance(e, OSError) or names & _HUB_ERRORS:
        return "file"
    return "loader"


def innermost_frames(e: BaseException, limit: int = TRACEBACK_FRAMES) -> str:
    """The innermost `limit` frames of e's traceback (where upstream code raised), then the
    exception line, as traceback prints them."""
    frames = traceback.extract_tb(e.__traceback__)[-limit:]
    return "".join(traceback.format_list(frames)) + "".join(traceback.format_exception_only(type(e), e))


def load(loader, config: dict, field: str) -> dict:
    """Runs the loader. A ConfigError passes through; any other failure becomes a LoadError
    that names what was being loaded (the factory, or the checkpoint in config[field]), what
    failed (failure_kind) with what to check, and the innermost frames of the traceback.
    The whole traceback goes to the plugin log."""
    try:
        return loader(config)
    except ConfigError:
        raise
    except Exception as e:
        kind = failure_kind(e)
        what = f"factory {config['factory']}" if config["factory"] else f"{config[field]!r}"
        logging.getLogger("adapter_kit").error("loading %s failed (%s)", what, kind, exc_info=True)
        message = (f"{'factory' if config['factory'] else field}: cannot load {what}: {type(e).__name__}: {e}. "
                   f"{_TITLES[kind]} failed: {_HINTS[kind]}.\n"
                   f"Traceback (innermost {TRACEBACK_FRAMES} frames; all of it in the plugin log):\n"
                   f"{innermost_frames(e)}")
        if len(message) > MESSAGE_LIMIT:
            message = message[:MESSAGE_LIMIT // 2] + "\n[...]\n" + message[-MESSAGE_LIMIT // 2:]
        raise LoadError(message.rstrip(), kind) from e


def source_digest(root: Path, paths: Iterable[str]) -> str:
    """SHA-256 over the upstream code an adapter imports from a checkout: each of `paths`
    (files, or directories whose .py files are taken), by name relative to root and
    content, so the identity changes when that code does and a checkout without .git is
    still pinned. A missing path is hashed as missing."""
    root = Path(root)
    h = hashlib.sha256()
    for rel in sorted(paths):
        p = root / rel
        files = sorted(p.rglob("*.py")) if p.is_dir() else [p]
        for f in files:
            name = f.relative_to(root).as_posix()
            if "__pycache__" in name:
                continue
            h.update(name.encode() + b"\0" + (f.read_bytes() if f.is_file() else b"<missing>") + b"\0")
    return "sha256:" + h.hexdigest()


def seed_all(torch, seed: int) -> None:
    """Seeds torch (and every CUDA device), random and numpy for one conversation."""
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)


class TorchOps:
    """numpy <-> torch for the Mimi + LMGen runtimes (moshi, flm-audio), the `ops` of their
    official loaders: frames in as float32 tensors on the device, tensors back as numpy,
    one token id, per-conversation seeding (what moshi/server.py seed_all does, per
    conversation instead of per process) and no_grad."""

    def __init__(self, device: str):
        import torch

        self.torch = torch
        self.device = torch.device(device)

    def from_numpy(self, array: np.ndarray):
        return self.torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32)).to(self.device)

    def to_numpy(self, tensor) -> np.ndarray:
        return tensor.detach().float().cpu().numpy()

    def item(self, tensor) -> int:
        return int(tensor.item())

    def seed(self, seed: int) -> None:
        seed_all(self.torch, seed)

    def no_grad(self):
        return self.torch.no_grad()


def mimi_lm_step(mimi, lm_gen, ops, codes) -> tuple[np.ndarray, list[int]]:
    """The inner loop of moshi/server.py, which FLM-Audio's server keeps: one LMGen.step
    per code frame of `codes` (Mimi's encoding of one input frame); each step that yields
    tokens has its audio tokens decoded by Mimi and gives one text token. Returns the
    float32 samples and the text token ids, in order; the caller turns ids into text."""
    pcm, text_ids = [], []
    for c in range(codes.shape[-1]):
        tokens = lm_gen.step(codes[:, :, c:c + 1])
        if tokens is None:
            continue
        pcm.append(ops.to_numpy(mimi.decode(tokens[:, 1:]))[0, 0])
        text_ids.append(ops.item(tokens[0, 0, 0]))
    samples = np.concatenate(pcm).astype(np.float32) if pcm else np.zeros(0, dtype=np.float32)
    return samples, text_ids


@dataclass
class StepOutput:
    samples: np.ndarray  # float32 at the conversation's output rate, possibly empty
    text: str = ""
    flush: bool = False


def load_runtime(config: dict, field: str, needed: set[str], official: Callable[[dict], dict]) -> dict:
    """The runtime dict the adapter drives: from the `factory` when config names one, else
    from the official loader; a failure names config[field] (the checkpoint) or the factory,
    and a runtime without every key in `needed` is refused."""
    loader = resolve_factory(config["factory"]) if config["factory"] else official
    runtime = load(loader, config, field)
    missing = set(needed) - set(runtime)
    if missing:
        raise ConfigError(f"factory: the runtime lacks {', '.join(sorted(missing))}")
    return runtime


class OneConversationAtATime:
    """Base of the adapters: one loaded model serves one conversation at a time (their
    model state is not batched). `active` is the open conversation; a start waits up to
    `start_wait_s` for it to close, since the host may open the next conversation while
    the last one is still closing. A conversation calls `_closed` when it closes."""

    def __init__(self):
        self.active = None
        self.start_wait_s = 30.0
        self._free = threading.Condition()

    def _wait_free(self) -> bool:
        """With self._free held: waits up to start_wait_s for the open conversation to
        close; True when none is open."""
        deadline = time.monotonic() + self.start_wait_s
        while self.active is not None and not self.active.closed:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self._free.wait(left)
        return True

    def _closed(self) -> None:
        with self._free:
            self._free.notify_all()

    def _check_idle(self) -> None:
        """Refuses a new config while a conversation is open."""
        if self.active is not None and not self.active.closed:
            raise RuntimeError(f"configure while conversation {self.active.conversation_id!r} is open")

    def _open(self, name: str, make: Callable[[], Any]):
        """Waits for the open conversation to close (up to start_wait_s), then makes the
        next one with make() and keeps it as the active one."""
        with self._free:
            if not self._wait_free():
                raise RuntimeError(f"{name} serves one conversation at a time; {self.active.conversation_id!r} "
                                   "is still open (run this model with concurrency 1)")
            self.active = make()
            return self.active
