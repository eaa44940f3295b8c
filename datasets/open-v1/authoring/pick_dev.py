#!/usr/bin/env python3
"""Choose the dev split (run once, before the scripts were final; its output is
dev.txt): up to 42 pairs (41 were found under the caps; every pair has an N4 event), stratified from the assignment table by
hash order under caps: 11 per cue type, 14 per T bucket, 21 per speaker count, 21 per N4
resolver, 4 per setting, 9 per register, 28 with a context fact. The content played no
part."""
import csv, hashlib, os

HERE = os.path.dirname(os.path.abspath(__file__))
rows = list(csv.DictReader(open(os.path.join(HERE, "assignments.tsv")), delimiter="\t"))
caps = {"cue": 11, "t_position": 14, "speakers": 21, "n4": 21, "setting": 4, "register": 9, "context_fact": 28}
count = {k: {} for k in caps}
pick = []
for r in sorted(rows, key=lambda r: hashlib.sha256(("open-v1-dev\0" + r["pair_id"]).encode()).hexdigest()):
    if any(count[k].get(r[k], 0) >= caps[k] for k in caps):
        continue
    for k in caps:
        count[k][r[k]] = count[k].get(r[k], 0) + 1
    pick.append(r["pair_id"])
    if len(pick) == 42:
        break
print("# The dev split of open v1: chosen by pick_dev.py from assignments.tsv before any script was written.")
for p in sorted(pick):
    print(p)
