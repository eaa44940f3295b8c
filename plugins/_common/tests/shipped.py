"""Playing a shipped conversation through an adapter's plugin process with the real
harness (test helper for plugins/*/tests_upstream).

`play` writes a run file whose dataset is one pair of the shipped scenarios
(examples/scenarios, spoken by the flite plugin with bench.hcl's voices and the default
preamble) and whose only model is the adapter's plugin.py, started by the duplexmpe
host with the given Python, config and environment; then runs `bin/duplexmpe run
--no-score` on it: the session streams the preamble and the turns frame by frame on the
virtual clock, with the protocol's closed-loop waits, and stores each conversation.
It returns the stored items (both versions of the pair) for the test to check.

The pair is hand-08, the shortest of the shipped pairs (58 s of turns for its two
versions, each after the 31 s preamble). `make build` must have built bin/.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[3]
BIN = REPO / "bin"
PAIR = "hand-08"
VOICES = {"A": "kal16", "B": "awb", "C": "rms", "D": "slt"}  # bench.hcl's


@dataclass
class Item:
    scenario_id: str
    status: str  # "done" or "failed" (unfinished items are left out)
    failure: str
    session: dict
    timeline: dict
    text: list
    audible: np.ndarray  # float32 at the model's output rate
    rate: int

    @property
    def seconds(self) -> float:
        return self.audible.size / self.rate

    def peak(self) -> float:
        return float(np.abs(self.audible).max()) if self.audible.size else 0.0


@dataclass
class Played:
    items: list[Item]
    wall_s: float
    log: str  # the plugin's log


def _hcl(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_hcl(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_hcl(v)}" for k, v in value.items()) + " }"
    raise TypeError(value)


def scenarios(pair: str = PAIR) -> str:
    """The shipped scenario lines of one pair."""
    lines = [line for line in (REPO / "examples" / "scenarios" / "scenarios.jsonl").read_text().splitlines()
             if line.strip() and json.loads(line)["pair_id"] == pair]
    assert len(lines) == 2, f"pair {pair}: {len(lines)} shipped versions"
    return "\n".join(lines) + "\n"


def run_file(tmp: Path, plugin_dir: Path, python: str, config: dict, env: dict, start_timeout: str) -> Path:
    (tmp / "scenarios").mkdir(parents=True, exist_ok=True)
    (tmp / "scenarios" / "scenarios.jsonl").write_text(scenarios())
    config_lines = "\n".join(f"    {k} = {_hcl(v)}" for k, v in config.items())
    text = f'''
plugin "flite" {{
  source = {_hcl(str(BIN / "plugins" / "flite"))}
}}
plugin "pocketsphinx" {{
  source = {_hcl(str(BIN / "plugins" / "pocketsphinx"))}
}}
plugin "lexical" {{
  source = {_hcl(str(BIN / "plugins" / "lexical-judge"))}
}}
plugin "model" {{
  command       = {_hcl([python, "plugin.py"])}
  dir           = {_hcl(str(plugin_dir))}
  env           = {_hcl(env)}
  start_timeout = {_hcl(start_timeout)}
  # Tiny models on a loaded CPU are slow by design: a Freeze-Omni answer is generated
  # and voiced inside one step. The host's 2 min / 5 min deadlines are for real models.
  frame_timeout              = "30m"
  conversation_start_timeout = "30m"
  config {{
{config_lines}
  }}
}}
dataset "shipped_pair" {{
  scenarios = {_hcl(str(tmp / "scenarios"))}
  tts       = plugin.flite
  voices    = {_hcl(VOICES)}
  preamble  = "default"
  out       = {_hcl(str(tmp / "dataset"))}
}}
evaluation "upstream" {{
  dataset = dataset.shipped_pair
  models  = [plugin.model]
  asr     = plugin.pocketsphinx
  judge   = plugin.lexical
  seed    = 1
  out     = {_hcl(str(tmp / "run"))}
}}
'''
    path = tmp / "upstream.hcl"
    path.write_text(text)
    return path


def _read_float_wav(path: Path) -> tuple[np.ndarray, int]:
    """audible.wav is 32-bit float, which the wave module refuses: read the RIFF chunks."""
    data = path.read_bytes()
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE", path
    pos, rate, samples = 12, 0, None
    while pos + 8 <= len(data):
        cid, size = data[pos:pos + 4], int.from_bytes(data[pos + 4:pos + 8], "little")
        body = data[pos + 8:pos + 8 + size]
        if cid == b"fmt ":
            rate = int.from_bytes(body[4:8], "little")
        elif cid == b"data":
            samples = np.frombuffer(body, dtype="<f4").copy()
        pos += 8 + size + (size & 1)
    assert samples is not None and rate, f"{path}: no fmt or data chunk"
    return samples, rate


def _read_flac(path: Path) -> tuple[np.ndarray, int]:
    """audible.flac (16-bit mono, the run store's format), decoded by Debian's flac."""
    head = path.read_bytes()[:26]
    assert head[:4] == b"fLaC", f"{path}: not a FLAC file"
    rate = int.from_bytes(head[18:26], "big") >> 44
    raw = subprocess.run(["flac", "--decode", "--silent", "--stdout", "--force-raw-format", "--endian=little",
                          "--sign=signed", str(path)], check=True, capture_output=True).stdout
    return np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768, rate


def _read_audible(d: Path) -> tuple[np.ndarray, int]:
    """The item's audible output: audible.flac, or audible.wav in runs written before it."""
    if (d / "audible.flac").exists():
        return _read_flac(d / "audible.flac")
    if (d / "audible.wav").exists():
        return _read_float_wav(d / "audible.wav")
    return np.zeros(0, np.float32), 1


def items(run_dir: Path) -> list[Item]:
    out = []
    for d in sorted((run_dir / "items").iterdir()) if (run_dir / "items").exists() else ():
        status = "done" if (d / "done").exists() else "failed" if (d / "failed").exists() else "missing"
        if status == "missing":
            continue  # interrupted before it finished: the store treats it as never run
        item = json.loads((d / "item.json").read_text())
        failure = (d / "failure.json").read_text() if (d / "failure.json").exists() else ""
        load = lambda name, default: json.loads((d / name).read_text()) if (d / name).exists() else default  # noqa: E731
        audible, rate = _read_audible(d)
        out.append(Item(item["scenario_id"], status, failure, load("session.json", {}), load("timeline.json", {}),
                        load("text.json", []), audible, rate))
    return out


SHIPPED = REPO / "build" / "datasets" / "shipped"  # what `make dataset-check` builds


def clip(turn: int, scenario: str = PAIR + "-explicit") -> Path:
    """The flite clip of one turn of a shipped scenario (16 kHz mono 16-bit WAV)."""
    index = SHIPPED / "scenarios.jsonl"
    assert index.exists(), f"{SHIPPED} is not built: run `make dataset-check` first"
    for line in index.read_text().splitlines():
        row = json.loads(line)
        if row["scenario_id"] == scenario:
            return SHIPPED / row["turns"][turn]["clip"]
    raise AssertionError(f"{scenario} is not in {index}")


def first_clip() -> bytes:
    return clip(0).read_bytes()


def speech(turns: range, scenario: str = PAIR + "-explicit", gap_s: float = 0.5) -> tuple[np.ndarray, int]:
    """Turns of a shipped scenario, each followed by gap_s of silence, as float32 samples."""
    parts, rate = [], 0
    for t in turns:
        with wave.open(str(clip(t, scenario)), "rb") as w:
            rate = w.getframerate()
            parts.append(np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.float32) / 32768)
        parts.append(np.zeros(int(gap_s * rate), np.float32))
    return np.concatenate(parts), rate


def _finished(run_dir: Path) -> int:
    items_dir = run_dir / "items"
    if not items_dir.exists():
        return 0
    return sum((d / "done").exists() or (d / "failed").exists() for d in items_dir.iterdir())


def play(tmp: Path, plugin_dir: Path, python: str, config: dict, env: dict | None = None,
         start_timeout: str = "15m", timeout: float = 4 * 3600, conversations: int | None = None) -> Played:
    """Plays the pair through plugin_dir/plugin.py under the real host; AssertionError with
    the harness's output when the run command fails. With `conversations`, the run is
    interrupted (SIGINT, as Ctrl-C) once that many conversations are stored, for models
    too slow on CPU to play both; the host keeps what it finished. The plugin runs with
    one torch thread (OMP_NUM_THREADS=1) unless env says otherwise: on a shared machine
    more threads only wait for each other. `timeout` only stops a run that hangs; it is
    far above what a loaded machine needs."""
    for tool in ("duplexmpe", "plugins/flite", "plugins/pocketsphinx", "plugins/lexical-judge"):
        assert (BIN / tool).exists(), f"{BIN / tool} is missing: run `make build` first"
    env = {"PYTHONUNBUFFERED": "1", "HF_HUB_OFFLINE": "1", "HOME": str(tmp), "OMP_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1", **(env or {})}
    path = run_file(Path(tmp), Path(plugin_dir), python, config, env, start_timeout)
    run_dir = Path(tmp) / "run"
    t0 = time.monotonic()
    with open(Path(tmp) / "run.out", "w") as out:
        proc = subprocess.Popen([str(BIN / "duplexmpe"), "run", str(path), "--no-score"], stdout=out,
                                stderr=subprocess.STDOUT, env={**os.environ, "NO_COLOR": "1"})
        interrupted = False
        try:
            while proc.poll() is None:
                if time.monotonic() - t0 > timeout:
                    proc.kill()
                    raise AssertionError(f"duplexmpe run took longer than {timeout} s")
                if conversations and not interrupted and _finished(run_dir) >= conversations:
                    proc.send_signal(signal.SIGINT)
                    interrupted = True
                time.sleep(1)
        finally:
            if proc.poll() is None:
                proc.kill()
    wall = time.monotonic() - t0
    output = (Path(tmp) / "run.out").read_text(errors="replace")
    logs = run_dir / "logs"
    log = "".join(p.read_text(errors="replace") for p in sorted(logs.glob("*.log"))) if logs.exists() else ""
    assert proc.returncode == 0 or interrupted, (f"duplexmpe run failed ({proc.returncode}):\n{output[-4000:]}"
                                                 f"\nplugin log:\n{log[-6000:]}")
    return Played(items(run_dir), wall, log + "\n" + output)
