import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLUGIN_DIR = HERE.parent
STANDINS = PLUGIN_DIR.parent / "_standins"
for p in (PLUGIN_DIR, STANDINS):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
