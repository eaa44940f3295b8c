"""The freeze-omni model plugin: `python plugin.py`, started by the duplexmpe host (go-plugin).

freeze_omni_adapter.py is the model side; the SDK binding, shared by the five model adapters, is
../_common/adapter_plugin.py, found relative to this file.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "_common")]

import adapter_plugin  # noqa: E402

import freeze_omni_adapter as ma  # noqa: E402

DESCRIPTION = ("Freeze-Omni in-process on the frame clock: Silero VAD + LLM state prediction per 160 ms chunk "
               "(16 kHz in), the whole answer voiced at once when it starts speaking (24 kHz out, bursty)."
               " Verified against: " + ma.VERIFIED)
CAPABILITIES = ("model.text", "model.instruction", "model.concurrency=1")

if __name__ == "__main__":
    adapter_plugin.serve(ma, ma.FreezeOmniAdapter(), DESCRIPTION, CAPABILITIES)
