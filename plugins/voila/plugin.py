"""The voila model plugin: `python plugin.py`, started by the duplexmpe host (go-plugin).

voila_adapter.py is the model side; the SDK binding, shared by the five model adapters, is
../_common/adapter_plugin.py, found relative to this file.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "_common")]

import adapter_plugin  # noqa: E402

import voila_adapter as ma  # noqa: E402

DESCRIPTION = ("Voila-autonomous (preview) in-process: run_generate turned into a step function, 40 ms frames "
               "(one audio token) at 16 kHz, text steps consume no input, Encodec with 1 s of context both ways."
               " Verified against: " + ma.VERIFIED)
CAPABILITIES = ("model.text", "model.instruction", "model.concurrency=1")

if __name__ == "__main__":
    adapter_plugin.serve(ma, ma.VoilaAdapter(), DESCRIPTION, CAPABILITIES)
