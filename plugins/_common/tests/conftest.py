import sys
from pathlib import Path

COMMON = Path(__file__).resolve().parent.parent
for p in (COMMON, COMMON.parent / "_standins"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
