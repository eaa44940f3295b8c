#!/usr/bin/env python3
"""Choose the dev split of open v2 (run once, from assignments.tsv, before any script was
written; its output is dev.txt): 104 pairs (10%), every one with an N4 event, stratified
by hash order under caps on the task kind, the addressing form, the cue type, the speaker
count and the T position. The content played no part."""
import csv, hashlib, os

HERE = os.path.dirname(os.path.abspath(__file__))
SIZE = 104
rows = [r for r in csv.DictReader(open(os.path.join(HERE, "assignments.tsv")), delimiter="\t") if r["n4"] != "0"]
total = len(list(csv.DictReader(open(os.path.join(HERE, "assignments.tsv")), delimiter="\t")))
# Caps: each value's share of the release times SIZE, plus one.
caps = {}
allrows = list(csv.DictReader(open(os.path.join(HERE, "assignments.tsv")), delimiter="\t"))
for k in ["task", "addressing", "cue", "speakers", "t_position"]:
    share = {}
    for r in allrows:
        share[r[k]] = share.get(r[k], 0) + 1
    caps[k] = {v: c * SIZE // total + 1 for v, c in share.items()}
count = {k: {} for k in caps}
pick = []
for r in sorted(rows, key=lambda r: hashlib.sha256(("open-v2-dev\0" + r["pair_id"]).encode()).hexdigest()):
    if any(count[k].get(r[k], 0) >= caps[k][r[k]] for k in caps):
        continue
    for k in caps:
        count[k][r[k]] = count[k].get(r[k], 0) + 1
    pick.append(r["pair_id"])
    if len(pick) == SIZE:
        break
print("# The dev split of open v2: chosen by pick_dev.py from assignments.tsv before any script was written.")
for p in sorted(pick):
    print(p)
