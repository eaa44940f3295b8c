import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
for p in (HERE.parent, HERE.parent / "tests", HERE.parents[1] / "_standins"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))
