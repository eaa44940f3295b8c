"""The GPU smoke driver that every Python model adapter's smoke.py runs: one real
conversation through the adapter's plugin process.

Starts plugin.py the way the host does (go-plugin handshake, mTLS), configures it (this
downloads the checkpoint on first use), streams the input followed by 8 s of silence, and
writes what the model said to --out. The input is a shipped conversation by default
(--scenario of build/datasets/shipped, which `make dataset-check` builds: the spoken
preamble, then the turns, 0.5 s apart as the protocol's default gaps; no closed-loop
wait), or any mono 16-bit WAV (--input). Audio is resampled to the model's rate by linear
interpolation, good enough for a smoke test. It prints the frame count, the first frame
with audible output, the text channel and the wall time per step. Exit 1 when the model
produced no samples at all.
"""

import argparse
import json
import os
import sys
import tempfile
import time
import wave
from pathlib import Path

import numpy as np

from duplexmpe_plugin._proto.duplexmpe.v1 import model_pb2, plugin_pb2
from duplexmpe_plugin.testing import launch

TAIL_SECONDS = 8.0
GAP_SECONDS = 0.5  # the protocol's default preamble_gap and turn_gap
SHIPPED = Path(__file__).resolve().parents[2] / "build" / "datasets" / "shipped"
DEFAULT_SCENARIO = "hand-11-explicit"  # the shortest shipped conversation


def read_wav(path: str) -> tuple[np.ndarray, int]:
    with wave.open(path, "rb") as w:
        if w.getsampwidth() != 2:
            sys.exit(f"smoke: {path} is not 16-bit PCM; convert it with sox in.wav -b 16 out.wav")
        data = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768
        return data.reshape(-1, w.getnchannels()).mean(axis=1), w.getframerate()


def write_wav(path: str, samples: np.ndarray, rate: int) -> None:
    with wave.open(path, "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(rate)
        w.writeframes((np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes())


def resample(x: np.ndarray, src: int, dst: int) -> np.ndarray:
    if src == dst:
        return x.astype(np.float32)
    n = int(round(len(x) * dst / src))
    return np.interp(np.arange(n) * src / dst, np.arange(len(x)), x).astype(np.float32)


def shipped_input(scenario: str, rate: int, dataset: Path = SHIPPED) -> np.ndarray:
    """The scenario of the shipped dataset as one waveform at rate: the preamble, then
    every turn, GAP_SECONDS apart."""
    scenarios = dataset / "scenarios.jsonl"
    if not scenarios.is_file():
        sys.exit(f"smoke: {scenarios} is missing: build the shipped dataset with `make dataset-check` "
                 "from the repository root, or give --input speech.wav")
    manifest = json.loads((dataset / "dataset.json").read_text()) if (dataset / "dataset.json").is_file() else {}
    clips = [manifest.get("preamble", {}).get("clip")] if manifest.get("preamble", {}).get("clip") else []
    for line in scenarios.read_text().splitlines():
        if line.strip() and json.loads(line)["scenario_id"] == scenario:
            clips += [t["clip"] for t in json.loads(line)["turns"]]
            break
    else:
        sys.exit(f"smoke: no scenario {scenario!r} in {scenarios}")
    gap = np.zeros(int(GAP_SECONDS * rate), np.float32)
    parts = []
    for clip in clips:
        audio, src = read_wav(str(dataset / clip))
        parts += [resample(audio, src, rate), gap]
    return np.concatenate(parts)


def main(plugin_dir: Path, default_config: dict, doc: str) -> int:
    """Runs the smoke conversation through plugin_dir/plugin.py; doc is the adapter's
    smoke.py docstring, shown by --help. Returns the exit status."""
    ap = argparse.ArgumentParser(description=doc + "\n" + __doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--input", help="mono 16-bit WAV to play to the model instead of a shipped conversation")
    ap.add_argument("--scenario", default=DEFAULT_SCENARIO, help="the shipped conversation to play (default: %(default)s)")
    ap.add_argument("--dataset", default=str(SHIPPED), help="the dataset holding --scenario (default: %(default)s)")
    ap.add_argument("--out", default=os.path.join(tempfile.gettempdir(), "duplexmpe-smoke-reply.wav"))
    ap.add_argument("--config", default=json.dumps(default_config), help="plugin config as JSON")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    t0 = time.monotonic()
    with launch([sys.executable, str(plugin_dir / "plugin.py")], cwd=str(plugin_dir), timeout=120) as p:
        p.plugin.Configure(plugin_pb2.ConfigureRequest(config_json=args.config), timeout=3600)
        info = p.plugin.Describe(plugin_pb2.DescribeRequest())
        print(f"smoke: {info.name} {info.version} configured in {time.monotonic() - t0:.0f} s")
        for k, v in sorted(info.identity.items()):
            print(f"  {k} = {v}")

        starts = iter(p.model.Converse(iter([model_pb2.ModelInput(
            start=model_pb2.ConversationStart(conversation_id="probe", seed=args.seed)),
            model_pb2.ModelInput(end=model_pb2.ConversationEnd())]), timeout=600))
        ready = next(starts).ready
        list(starts)
        rate, size = ready.input_rate, ready.frame_size
        if args.input:
            audio, src = read_wav(args.input)
            audio = resample(audio, src, rate)
        else:
            audio = shipped_input(args.scenario, rate, Path(args.dataset))
        audio = np.concatenate([audio, np.zeros(int(TAIL_SECONDS * rate), np.float32)])
        audio = np.concatenate([audio, np.zeros(-len(audio) % size, np.float32)])
        frames = audio.reshape(-1, size)

        def requests():
            yield model_pb2.ModelInput(start=model_pb2.ConversationStart(conversation_id="smoke", seed=args.seed))
            for i, f in enumerate(frames):
                yield model_pb2.ModelInput(frame=model_pb2.InputFrame(index=i, pcm=f.astype("<f4").tobytes()))
            yield model_pb2.ModelInput(end=model_pb2.ConversationEnd())

        t1 = time.monotonic()
        replies = [r.frame for r in p.model.Converse(requests(), timeout=3600) if r.HasField("frame")]
        wall = time.monotonic() - t1
        p.shutdown()

    out = [np.frombuffer(r.pcm, dtype="<f4") for r in replies]
    samples = np.concatenate(out) if out else np.zeros(0, np.float32)
    audible = [i for i, o in enumerate(out) if o.size and np.abs(o).max() > 0.02]
    print(f"smoke: {len(frames)} frames of {size} at {rate} Hz in, {samples.size} samples at "
          f"{ready.output_rate} Hz out; {1000 * wall / max(len(frames), 1):.1f} ms per step "
          f"(real time: {1000 * size / rate:.0f} ms)")
    print(f"smoke: first audible output at frame {audible[0] if audible else None}; "
          f"flushes: {sum(r.flush for r in replies)}")
    print("smoke: text: " + repr("".join(r.text for r in replies))[:400])
    write_wav(args.out, samples, ready.output_rate)
    print(f"smoke: wrote {args.out}")
    return 0 if samples.size else 1

