import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLUGIN_DIR = HERE.parent
COMMON = PLUGIN_DIR.parent / "_common"  # adapter_kit.py, which moshi_adapter imports
for p in (PLUGIN_DIR, HERE, COMMON):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
# Skip moshi's lazy torch.compile: it costs ~30 s on the first step of every process, and
# these tests run few steps. The GPU path keeps it.
os.environ.setdefault("NO_TORCH_COMPILE", "1")
