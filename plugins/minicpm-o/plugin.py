"""The minicpm-o model plugin: `python plugin.py`, started by the duplexmpe host (go-plugin).

minicpmo_adapter.py is the model side; the SDK binding, shared by the five model adapters, is
../_common/adapter_plugin.py, found relative to this file.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "_common")]

import adapter_plugin  # noqa: E402

import minicpmo_adapter as ma  # noqa: E402

DESCRIPTION = ("MiniCPM-o 4.5 in duplex mode in-process: one 1 s unit per step (16 kHz in, 24 kHz out), "
               "streaming_prefill then streaming_generate; listen units play nothing."
               " Verified against: " + ma.VERIFIED)
CAPABILITIES = ("model.text", "model.instruction", "model.concurrency=1")

if __name__ == "__main__":
    adapter_plugin.serve(ma, ma.MiniCPMOAdapter(), DESCRIPTION, CAPABILITIES)
