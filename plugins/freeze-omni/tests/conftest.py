import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLUGIN_DIR = HERE.parent
STANDINS = PLUGIN_DIR.parent / "_standins"
COMMON = PLUGIN_DIR.parent / "_common"  # adapter_process.py, the plugin-process test helpers
for p in (PLUGIN_DIR, STANDINS, COMMON):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
