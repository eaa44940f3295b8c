"""The upstream tier for Voila: the adapter, through its real plugin process under the
real duplexmpe host, plays a whole shipped conversation against Voila's own code
(VoilaAutonomousModel, its AudioTransformer, VoilaTokenizer's Encodec, spkr's pyannote
embedding) with tiny random models on CPU (tiny_voila.py), loaded by the adapter's own
loader from local checkpoints. Run by `make test-adapters`."""

import sys
from pathlib import Path

import shipped

PLUGIN_DIR = Path(__file__).resolve().parents[1]


def test_a_shipped_conversation_on_voilas_code(tiny, tmp_path):
    played = shipped.play(tmp_path, PLUGIN_DIR, sys.executable, tiny, conversations=1)
    assert played.items, "no conversation finished"
    item = played.items[0]
    assert item.status == "done", item.failure
    assert item.session["format"] == {"InputRate": 16000, "OutputRate": 16000, "FrameSize": 640}
    assert item.session["frames"] * 640 / 16000 >= item.timeline["turns"][-1]["end"]
    # While it listens Voila still emits audio rows: about one 40 ms row per frame.
    assert item.audible.size >= 0.5 * item.session["frames"] * 640
    assert "\"@level\": \"error\"" not in played.log, "the plugin logged an error"
    print(f"voila upstream tier: {item.scenario_id}, {item.session['frames']} frames, "
          f"{item.seconds:.1f} s recorded, played in {played.wall_s:.0f} s")
