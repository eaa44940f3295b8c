"""The shared smoke driver, run as an adapter's smoke.py on its numpy stand-in."""

import json
import os
import subprocess
import sys
import wave
from pathlib import Path

PLUGINS = Path(__file__).resolve().parents[2]


def test_moshi_smoke_on_the_standin(tmp_path):
    out = tmp_path / "reply.wav"
    env = dict(os.environ, PYTHONPATH=str(PLUGINS / "_standins"))
    run = subprocess.run([sys.executable, str(PLUGINS / "moshi" / "smoke.py"), "--out", str(out),
                          "--config", json.dumps({"factory": "standin_moshi:load", "device": "cpu"})],
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "smoke: moshi 0.1.0 configured" in run.stdout
    assert "frames of 1920 at 24000 Hz in" in run.stdout
    with wave.open(str(out)) as w:
        assert w.getframerate() == 24000 and w.getnframes() > 0


def test_smoke_help_shows_the_driver_description():
    run = subprocess.run([sys.executable, str(PLUGINS / "voila" / "smoke.py"), "--help"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0
    assert "through the voila plugin process" in run.stdout and "Starts plugin.py the way the host does" in run.stdout
