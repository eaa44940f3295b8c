"""The upstream tier for Voila: the adapter, through its real plugin process under the
real duplexmpe host, plays a whole shipped conversation against Voila's own code
(VoilaAutonomousModel, its AudioTransformer, VoilaTokenizer's Encodec, spkr's pyannote
embedding) with tiny random models on CPU (tiny_voila.py), loaded by the adapter's own
loader from local checkpoints.

Voila fixes its AudioTransformer at 4 layers of 1024 (about 50 M parameters, not set by
the model config) and runs it on every model step, so the cost is the number of steps.
The model here is tiny_listening: its text head biased to audio steps
(tiny_voila.LISTENING_AUDIO_BIAS), about one step per 40 ms frame, where the equivalence
test's model takes about 2.4 (most of them text steps). The test asserts that rate from
the adapter's own count in the plugin log, so a change of the bias is seen here, not as
a slower run. Measured figures: plugins/voila/README.md."""

import json
import sys
from pathlib import Path

import shipped

PLUGIN_DIR = Path(__file__).resolve().parents[1]
FRAME = 640  # samples of one 40 ms frame at 16 kHz, in and out


def closed_conversations(log: str) -> list[dict]:
    """The adapter's "conversation closed" entries (voila_adapter.VoilaConversation.close)."""
    out = []
    for line in log.splitlines():
        start = line.find("{")
        if start < 0 or "conversation closed" not in line:
            continue
        try:
            entry = json.loads(line[start:])
        except ValueError:
            continue
        if entry.get("@message") == "conversation closed" and "audio_steps" in entry:
            out.append(entry)
    return out


def test_a_shipped_conversation_on_voilas_code(tiny_listening, tmp_path):
    played = shipped.play(tmp_path, PLUGIN_DIR, sys.executable, tiny_listening, conversations=1)
    assert played.items, "no conversation finished"
    item = played.items[0]
    assert item.status == "done", item.failure
    assert item.session["format"] == {"InputRate": 16000, "OutputRate": 16000, "FrameSize": FRAME}
    frames = item.session["frames"]
    assert frames * FRAME / 16000 >= item.timeline["turns"][-1]["end"], "the conversation was not played to its end"
    # While it listens Voila still emits audio rows: one 40 ms row per audio step.
    assert item.audible.size >= 0.9 * frames * FRAME, f"{item.audible.size / FRAME:.0f} audio rows in {frames} frames"
    assert "\"@level\": \"error\"" not in played.log, "the plugin logged an error"

    closed = {e["conversation"]: e for e in closed_conversations(played.log)}
    assert item.scenario_id in closed, f"the adapter logged no step counts for {item.scenario_id}: {sorted(closed)}"
    counts = closed[item.scenario_id]
    assert counts["frames"] == frames, (counts, frames)
    # Every frame's user row is taken by one audio step; the bias leaves few text steps.
    assert counts["audio_steps"] >= 0.95 * frames, counts
    assert counts["text_steps"] <= 0.1 * frames, counts
    print(f"voila upstream tier: {item.scenario_id}, {frames} frames, {counts['audio_steps']} audio and "
          f"{counts['text_steps']} text steps ({counts['steps_per_frame']} per frame), {item.seconds:.1f} s "
          f"recorded, played in {played.wall_s:.0f} s")
