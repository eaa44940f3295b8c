#!/usr/bin/env python3
"""Draw the validation sample and write what each blind reviewer sees (run once, after
the splits were compiled). 65 pairs, stratified by cue type, T bucket, speaker count and
authoring batch, in hash order; of each pair one reviewer gets the explicit version and
the other the implicit one, so neither sees both versions of a pair (130 scenarios, 15.1%
of the 860). A sheet shows, per scenario, the speakers as voices (letter, woman/man) and
the turns' words: no labels, no addressees, no condition, no gold answer, no cue."""
import collections, hashlib, json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
REL = os.path.dirname(HERE)
VOICE = {"A": "woman", "B": "man", "C": "woman", "D": "man"}
PAIRS = 65

scs = []
for split in ("dev", "test"):
    for line in open(os.path.join(REL, split, "scenarios.jsonl")):
        if line.strip():
            scs.append(json.loads(line))
by_pair = collections.defaultdict(dict)
for s in scs:
    by_pair[s["pair_id"]][s["condition"]] = s


def strata(p):
    im = by_pair[p]["implicit"]
    return (im["cue"], im["t_position"], len(im["speakers"]), (int(p.split("-")[1]) - 1) // 86)


order = sorted(by_pair, key=lambda p: hashlib.sha256(("open-v1-validation\0" + p).encode()).hexdigest())
caps = {0: 17, 1: 22, 2: 33, 3: 13}  # cue, bucket, speakers, batch
count = [collections.Counter() for _ in caps]
sample = []
for p in order:
    st = strata(p)
    if any(count[i][st[i]] >= caps[i] for i in caps):
        continue
    for i in caps:
        count[i][st[i]] += 1
    sample.append(p)
    if len(sample) == PAIRS:
        break
sample.sort()
sheets = {"A": [], "B": []}
for k, p in enumerate(sample):
    # Alternate which reviewer gets which version.
    first, second = ("explicit", "implicit") if k % 2 == 0 else ("implicit", "explicit")
    for reviewer, cond in (("A", first), ("B", second)):
        s = by_pair[p][cond]
        sheets[reviewer].append({
            "item": s["scenario_id"].replace("-explicit", "").replace("-implicit", "") + ("/x" if reviewer == "A" else "/y"),
            "scenario_id": s["scenario_id"],
            "setting": s["attributes"]["setting"], "activity": s["attributes"]["activity"],
            "other_device": s["attributes"]["devices"].split("(")[1].rstrip(")"),
            "speakers": {sp: VOICE[sp] for sp in s["speakers"]},
            "turns": [{"i": i, "speaker": t["speaker"], "text": t["text"]} for i, t in enumerate(s["turns"])],
        })
with open(os.path.join(HERE, "sample.txt"), "w") as f:
    f.write("# The validation sample: 65 pairs; reviewer A and reviewer B each saw one version of each.\n")
    for p in sample:
        f.write(p + "\n")
for r, items in sheets.items():
    # The scenario id names the condition: the reviewer's sheet holds only the item key.
    with open(os.path.join(HERE, f"blind-{r}.jsonl"), "w") as f:
        for it in items:
            sid = it.pop("scenario_id")
            f.write(json.dumps(it) + "\n")
    with open(os.path.join(HERE, f"key-{r}.tsv"), "w") as f:
        for it, s in zip(items, [by_pair[p][("explicit", "implicit")[(k % 2) ^ (r == "B")]] for k, p in enumerate(sample)]):
            f.write(f"{it['item']}\t{s['scenario_id']}\n")
print({r: len(v) for r, v in sheets.items()}, [dict(c) for c in count])
