"""The moshi model plugin: `python plugin.py`, started by the duplexmpe host (go-plugin).

moshi_adapter.py is the model side; the SDK binding, shared by the five model adapters, is
../_common/adapter_plugin.py, found relative to this file.
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "_common")]

import adapter_plugin  # noqa: E402

import moshi_adapter as ma  # noqa: E402

DESCRIPTION = ("Kyutai Moshi in-process: Mimi encode -> LMGen.step -> Mimi decode, "
               "80 ms frames at 24 kHz in and out, inner-monologue text on the text channel. "
               "Verified against moshi 0.2.13 (PyPI) with a tiny random model on CPU (upstream tier: a whole shipped "
               "conversation, and token for token against moshi.server's own loop); GPU smoke not run. "
               "Deviations from moshi.server: no Opus either way, seeded per conversation instead of once per process.")
CAPABILITIES = ("model.text", "model.concurrency=1")

if __name__ == "__main__":
    adapter_plugin.serve(ma, ma.MoshiAdapter(), DESCRIPTION, CAPABILITIES)
