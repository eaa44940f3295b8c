import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PLUGIN_DIR = HERE.parent
for p in (PLUGIN_DIR, PLUGIN_DIR.parent / "_standins", PLUGIN_DIR.parent / "_common",
          PLUGIN_DIR.parent / "_common" / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
