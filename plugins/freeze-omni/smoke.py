"""One real conversation through the freeze-omni plugin process, on a GPU.

    python smoke.py [--input speech.wav] [--out reply.wav] [--config '{"device": "cuda"}']

What it does and prints: ../_common/smoke_driver.py (found relative to this file;
`--help` shows it too).
"""

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "_common"))

import smoke_driver  # noqa: E402

DEFAULT_CONFIG = {"freeze_omni_dir": "/opt/freeze-omni", "model_path": "/opt/freeze-omni/checkpoints",
                  "llm_path": "/opt/freeze-omni/Qwen2-7B-Instruct"}  # README.md's install layout

if __name__ == "__main__":
    sys.exit(smoke_driver.main(HERE, DEFAULT_CONFIG, __doc__))
