"""The upstream tier for Freeze-Omni: the adapter, through its real plugin process under
the real duplexmpe host, plays a whole shipped conversation pair against Freeze-Omni's
own code (web/vad.py's Silero VAD, models/pipeline.py, llm2TTS and TiCodec) with a tiny
random checkpoint on CPU (tiny_freezeomni.py). Run by `make test-adapters`."""

import sys
from pathlib import Path

import numpy as np

import shipped

HERE = Path(__file__).resolve().parent
PLUGIN_DIR = HERE.parent


def test_a_shipped_conversation_on_freeze_omnis_code(tiny, upstream, tmp_path):
    played = shipped.play(tmp_path, PLUGIN_DIR, sys.executable, tiny, env={"PYTHONPATH": str(HERE)},
                          conversations=1)
    assert played.items, "no conversation finished"
    item = played.items[0]
    assert item.status == "done", item.failure
    assert item.session["format"] == {"InputRate": 16000, "OutputRate": 24000, "FrameSize": 2560}
    assert item.session["frames"] * 2560 / 16000 >= item.timeline["turns"][-1]["end"]
    # The tiny model's state head leans to "start speaking": it answers (TiCodec audio at
    # 24 kHz) and says something on the text channel.
    assert item.peak() > 0.0 and np.count_nonzero(item.audible) > 24000
    assert item.text
    assert "\"@level\": \"error\"" not in played.log, "the plugin logged an error"
    print(f"freeze-omni upstream tier: {item.scenario_id}, {item.session['frames']} frames, "
          f"{item.seconds:.1f} s recorded, played in {played.wall_s:.0f} s")
