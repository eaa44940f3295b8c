"""One real conversation through the flm-audio plugin process, on a GPU.

    python smoke.py [--scenario hand-11-explicit | --input speech.wav] [--out reply.wav]
                    [--config '{"device": "cuda", "flmaudio_dir": "/opt/flm-audio"}']

flmaudio is not on PyPI: by default flmaudio_dir is $DUPLEXMPE_UPSTREAM_FLM_AUDIO (a
checkout of cofe-ai/flm-audio), else flmaudio must be on PYTHONPATH.

What it does and prints: ../_common/smoke_driver.py (found relative to this file;
`--help` shows it too).
"""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "_common"))

import smoke_driver  # noqa: E402

DEFAULT_CONFIG = {"device": "cuda", "flmaudio_dir": os.environ.get("DUPLEXMPE_UPSTREAM_FLM_AUDIO", "")}

if __name__ == "__main__":
    sys.exit(smoke_driver.main(HERE, DEFAULT_CONFIG, __doc__))
