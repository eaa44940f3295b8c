import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLUGIN_DIR = HERE.parent
COMMON = PLUGIN_DIR.parent / "_common"  # adapter_kit.py, which flm_audio_adapter imports
STANDINS = PLUGIN_DIR.parent / "_standins"
for p in (PLUGIN_DIR, HERE, COMMON, STANDINS):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
# LMGen wraps the model's forward and forward_audio in torch.compile on its first
# streaming state; on these CPUs compiling costs minutes and changes nothing the tests
# check, so dynamo is off here (the GPU path keeps it).
os.environ.setdefault("TORCHDYNAMO_DISABLE", "1")
