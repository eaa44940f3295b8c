#!/usr/bin/env python3
"""Write the recheck sheet (run once, after the edits): the three implicit versions whose
request the first reviewers did not hear as Aria's (ov2-0105, ov2-0124, ov2-0157), as
edited to make the cue audible, for a fifth reviewer (E) who wrote, edited and reviewed
none of open v2. The sheet shows what a listener hears, as make_sheets.py's do."""
import json, os

HERE = os.path.dirname(os.path.abspath(__file__))
REL = os.path.dirname(os.path.dirname(HERE))
VOICE = {"A": "woman", "B": "man", "C": "woman", "D": "man"}
WANT = ["ov2-0105-implicit", "ov2-0124-implicit", "ov2-0157-implicit"]
by = {}
for split in ("dev", "test"):
    for line in open(os.path.join(REL, split, "scenarios.jsonl")):
        s = json.loads(line)
        by[s["scenario_id"]] = s
with open(os.path.join(HERE, "blind-E.jsonl"), "w") as sheet, open(os.path.join(HERE, "key-E.tsv"), "w") as key:
    for k, sid in enumerate(WANT, 1):
        s = by[sid]
        item = f"v2-E{k:03d}"
        sheet.write(json.dumps({
            "item": item, "setting": s["attributes"]["setting"], "activity": s["attributes"]["activity"],
            "other_device": s["attributes"]["devices"].split("(")[1].rstrip(")"),
            "speakers": {sp: VOICE[sp] for sp in s["speakers"]},
            "turns": [{"i": i, "speaker": t["speaker"], "text": t["text"]} for i, t in enumerate(s["turns"])],
        }) + "\n")
        key.write(f"{item}\t{sid}\n")
