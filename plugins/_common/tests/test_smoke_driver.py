"""The shared smoke driver, run as an adapter's smoke.py on its numpy stand-in."""

import json
import os
import subprocess
import sys
import wave
from pathlib import Path

import numpy as np

PLUGINS = Path(__file__).resolve().parents[2]


def write_wav(path: Path, samples: np.ndarray, rate: int) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(rate)
        w.writeframes((np.clip(samples, -1, 1) * 32767).astype("<i2").tobytes())


def tiny_dataset(root: Path) -> Path:
    """A dataset laid out as `duplexmpe build` writes it: a preamble and two turns."""
    (root / "clips").mkdir(parents=True)
    t = np.arange(16000) / 16000
    for name, f in (("pre", 180), ("t1", 220), ("t2", 260)):
        write_wav(root / "clips" / f"{name}.wav", 0.3 * np.sin(2 * np.pi * f * t), 16000)
    (root / "dataset.json").write_text(json.dumps({"preamble": {"clip": "clips/pre.wav"}}))
    turns = [{"speaker": "A", "text": "x", "label": "N1", "clip": "clips/t1.wav"},
             {"speaker": "B", "text": "y", "label": "T", "clip": "clips/t2.wav"}]
    (root / "scenarios.jsonl").write_text(json.dumps({"scenario_id": "s-1", "turns": turns}) + "\n")
    return root


def test_moshi_smoke_on_the_standin_plays_a_shipped_conversation(tmp_path):
    out = tmp_path / "reply.wav"
    env = dict(os.environ, PYTHONPATH=str(PLUGINS / "_standins"))
    run = subprocess.run([sys.executable, str(PLUGINS / "moshi" / "smoke.py"), "--out", str(out),
                          "--dataset", str(tiny_dataset(tmp_path / "ds")), "--scenario", "s-1",
                          "--config", json.dumps({"factory": "standin_moshi:load", "device": "cpu"})],
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "smoke: moshi 0.1.0 configured" in run.stdout
    # 3 clips of 1 s, each followed by 0.5 s, then 8 s of silence: 12.5 s, 157 frames.
    assert "157 frames of 1920 at 24000 Hz in" in run.stdout
    with wave.open(str(out)) as w:
        assert w.getframerate() == 24000 and w.getnframes() > 0


def test_smoke_without_the_dataset_says_how_to_build_it(tmp_path):
    run = subprocess.run([sys.executable, str(PLUGINS / "moshi" / "smoke.py"), "--dataset", str(tmp_path / "none"),
                          "--config", json.dumps({"factory": "standin_moshi:load", "device": "cpu"})],
                         env=dict(os.environ, PYTHONPATH=str(PLUGINS / "_standins")),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and "make dataset-check" in run.stderr


def test_smoke_help_shows_the_driver_description():
    run = subprocess.run([sys.executable, str(PLUGINS / "voila" / "smoke.py"), "--help"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0
    assert "through the voila plugin process" in run.stdout and "Starts plugin.py the way the host does" in run.stdout
