"""The flm-audio model plugin: `python plugin.py`, started by the duplexmpe host (go-plugin).

flm_audio_adapter.py is the model side; the SDK binding, shared by the five model adapters, is
../_common/adapter_plugin.py, found relative to this file.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "_common")]

import adapter_plugin  # noqa: E402

import flm_audio_adapter as ma  # noqa: E402

DESCRIPTION = ("FLM-Audio (Moshi-style) in-process: Mimi encode -> LMGen.step -> Mimi decode, "
               "80 ms frames at 24 kHz in and out, inner-monologue text on the text channel. "
               "Verified against cofe-ai/flm-audio 41d768c as shipped, with a tiny random model on CPU (upstream tier: "
               "a whole shipped conversation, the official loader on the checkout); GPU smoke not run. "
               "Deviations from flmaudio/server.py: forward_audio bridged to the two-argument DepthGPT call LMGen makes "
               "(41d768c's own cannot run), no Opus, seeded per conversation, text cut per step not per word.")
CAPABILITIES = ("model.text", "model.concurrency=1")

if __name__ == "__main__":
    adapter_plugin.serve(ma, ma.FLMAudioAdapter(), DESCRIPTION, CAPABILITIES)
