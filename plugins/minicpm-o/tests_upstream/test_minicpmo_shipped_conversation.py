"""The upstream tier for MiniCPM-o: its modeling code cannot be shipped or run here (9 B
parameters, no hub), so the adapter plays a whole shipped conversation pair through its
real plugin process, under the real duplexmpe host, against the stand-in that
tests/test_standin_matches_demo.py checks point by point against MiniCPM-o-Demo 28b60cf
(signatures, the needs_finalize property, unit sizes, force_listen_count). Run by
`make test-adapters`."""

import sys
from pathlib import Path

import numpy as np

import shipped

PLUGIN_DIR = Path(__file__).resolve().parents[1]
STANDINS = PLUGIN_DIR.parent / "_standins"


def test_a_shipped_conversation_on_the_checked_standin(tmp_path):
    played = shipped.play(tmp_path, PLUGIN_DIR, sys.executable, {"factory": "standin_minicpmo:load", "device": "cpu"},
                          env={"PYTHONPATH": str(STANDINS)})
    assert [i.status for i in played.items] == ["done", "done"], [i.failure for i in played.items]
    for item in played.items:
        assert item.session["format"] == {"InputRate": 16000, "OutputRate": 24000, "FrameSize": 16000}
        end = item.timeline["turns"][-1]["end"]
        assert item.session["frames"] >= end, "the conversation stopped before its last turn"
        # The stand-in answers after speech followed by a quiet unit, once the demo's 3
        # forced listening units are over: it speaks after the preamble.
        first = np.flatnonzero(np.abs(item.audible) > 0.1)
        assert first.size and first[0] / item.rate > 3.0, "spoke during the forced listening units"
        assert "".join(item.text if isinstance(item.text, str) else (t.get("text", "") for t in item.text)).strip()
    assert "\"@level\": \"error\"" not in played.log, "the plugin logged an error"
