"""Runs Kyutai's real server, `python -m moshi.server` from the installed moshi package,
on the tiny random checkpoint of tiny_moshi.py, and records what it does (a test
instrument for plugins/moshi and plugins/moshi-ws; not part of any plugin).

    python moshi_server_tee.py --hub DIR --tee DIR --port N [--seed S]
                               [--frame-delay-ms D] [--mark-frames]

The server module runs unchanged (runpy, with its own argument parser: --hf-repo of the
tiny checkpoint in a Hugging Face cache under --hub, offline, --device cpu, --static none).
Around it, and only at the library boundaries it calls:

- per connection (sphn.OpusStreamWriter is made once per /api/chat connection), a folder
  tee/conn-<n>/ gets input.f32 (the PCM the server decoded from the client's Opus, as
  OpusStreamReader.append_bytes returned it), output.f32 (the PCM each decoded frame
  handed to OpusStreamWriter.append_pcm), codes.i64 and tokens.i64 (every LMGen.step:
  its [1, 8, 1] input codes and its [1, 9, 1] tokens, -1s when it returned None). The
  warmup before the first connection is not recorded.
- --seed S reseeds torch, numpy and random (as the server's seed_all) when a connection
  opens, so a test can start the adapter from the same random state; the server itself
  seeds once at start and carries the state across connections.
- --frame-delay-ms D sleeps D ms before each decoded frame is sent: a server slower than
  real time.
- --mark-frames adds a mark to decoded frame j before it is encoded (and recorded): a
  200 -> 3200 Hz chirp repeated every 0.4 s, continuous across frames, at a level drawn
  from j (its autocorrelation has one sharp peak within +-0.2 s). A random tiny Mimi decodes every frame to nearly the same waveform (a DC level and
  harmonics of 1.2 kHz), so without the mark its output could not be placed in time.
- torch.cuda.synchronize, which the server's warmup calls unconditionally, becomes a no-op
  when torch has no CUDA device: the one change the server needs to run on a CPU.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import runpy
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = "tiny/moshi-random"


def frame_gain(j: int) -> float:
    """The level of decoded frame j's mark: in [0.25, 1), from a fixed hash of j."""
    x = math.sin(j * 12.9898 + 78.233) * 43758.5453
    return 0.25 + 0.75 * (x - math.floor(x))


def mark(j: int, size: int, rate: int):
    """Frame j's mark: samples [j*size, (j+1)*size) of a 200 -> 3200 Hz linear chirp that
    restarts every 0.4 s, times 0.2 * frame_gain(j)."""
    import numpy as np

    period = 0.4
    t = ((j * size + np.arange(size)) % int(period * rate)) / rate
    phase = 2 * np.pi * (200 * t + (3200 - 200) / (2 * period) * t * t)
    return (0.2 * frame_gain(j) * np.sin(phase)).astype(np.float32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hub", required=True, help="Hugging Face cache folder; the tiny checkpoint is written there if missing")
    ap.add_argument("--tee", required=True, help="folder for the per-connection records")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--frame-delay-ms", type=float, default=0.0)
    ap.add_argument("--mark-frames", action="store_true")
    args = ap.parse_args()

    hub, tee_root = Path(args.hub).resolve(), Path(args.tee).resolve()
    os.environ.update(HF_HUB_CACHE=str(hub), HF_HUB_OFFLINE="1", NO_TORCH_COMPILE="1")
    sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent.parent / "_common")]

    import numpy as np
    import sphn
    import torch
    from moshi.models import lm as moshi_lm

    import tiny_moshi

    torch.set_num_threads(1)
    if not (hub / ("models--" + REPO.replace("/", "--"))).is_dir():
        tiny_moshi.write_hf_cache(hub, repo=REPO)
    if not torch.cuda.is_available():
        torch.cuda.synchronize = lambda *a, **k: None

    lock = threading.Lock()
    state = {"conn": 0, "dir": None}

    def record(name: str, array) -> None:
        if state["dir"] is None:
            return
        with lock, open(state["dir"] / name, "ab") as f:
            f.write(np.ascontiguousarray(array).tobytes())

    real_writer, real_reader = sphn.OpusStreamWriter, sphn.OpusStreamReader

    class TeeWriter:
        def __init__(self, sample_rate, *a, **k):
            state["conn"] += 1
            d = tee_root / f"conn-{state['conn']}"
            d.mkdir(parents=True, exist_ok=True)
            state["dir"] = d
            if args.seed is not None:
                torch.manual_seed(args.seed)
                random.seed(args.seed)
                np.random.seed(args.seed)
            self.inner = real_writer(sample_rate, *a, **k)
            self.frames = 0
            self.rate = sample_rate

        def append_pcm(self, pcm):
            if args.frame_delay_ms:
                time.sleep(args.frame_delay_ms / 1000)
            if args.mark_frames:
                pcm = (pcm + mark(self.frames, len(pcm), self.rate)).astype(np.float32)
            self.frames += 1
            record("output.f32", pcm.astype("<f4"))
            return self.inner.append_pcm(pcm)

    class TeeReader:
        def __init__(self, sample_rate, *a, **k):
            self.inner = real_reader(sample_rate, *a, **k)

        def append_bytes(self, data):
            pcm = self.inner.append_bytes(data)
            record("input.f32", np.asarray(pcm, dtype="<f4"))
            return pcm

    sphn.OpusStreamWriter, sphn.OpusStreamReader = TeeWriter, TeeReader

    real_step = moshi_lm.LMGen.step

    def step(self, input_tokens, *a, **k):
        out = real_step(self, input_tokens, *a, **k)
        record("codes.i64", input_tokens.detach().cpu().numpy().astype("<i8"))
        tokens = out if out is not None else torch.full((1, 9, 1), -1)
        record("tokens.i64", tokens.detach().cpu().numpy().astype("<i8"))
        return out

    moshi_lm.LMGen.step = step

    sys.argv = ["moshi.server", "--hf-repo", REPO, "--device", "cpu", "--static", "none",
                "--host", "127.0.0.1", "--port", str(args.port)]
    runpy.run_module("moshi.server", run_name="__main__")


if __name__ == "__main__":
    main()
