#!/usr/bin/env python3
"""Draw open v2's validation sample and write what each blind reviewer sees (run once,
after the splits were compiled). 112 pairs (10.8% of 1,040), stratified by task kind, cue
type, addressing form, speaker count and authoring batch, in hash order under caps. Four
reviewers, A to D: pairs alternate between the (A, B) and (C, D) teams, and within a team
one reviewer gets the explicit version and the other the implicit one, so no reviewer
sees both versions of a pair. A sheet shows, per scenario, the speakers as voices (letter,
woman/man), the other device's wake word and the turns' words: no labels, no addressees,
no condition, no gold answer, no cue, no tags. Item ids are opaque (v2-001 ...); key-R.tsv
maps them to scenario ids for `duplexmpe dataset review`."""
import collections, hashlib, json, os

HERE = os.path.dirname(os.path.abspath(__file__))
REL = os.path.dirname(HERE)
VOICE = {"A": "woman", "B": "man", "C": "woman", "D": "man"}
PAIRS = 112

scs = []
for split in ("dev", "test"):
    for line in open(os.path.join(REL, split, "scenarios.jsonl")):
        if line.strip():
            scs.append(json.loads(line))
by_pair = collections.defaultdict(dict)
for s in scs:
    by_pair[s["pair_id"]][s["condition"]] = s
n = len(by_pair)


def strata(p):
    im, ex = by_pair[p]["implicit"], by_pair[p]["explicit"]
    return {"task": im["task"], "cue": im["cue"], "addressing": ex["addressing"],
            "speakers": len(im["speakers"]), "batch": (int(p.split("-")[1]) - 1) // 130}


share = collections.defaultdict(collections.Counter)
for p in by_pair:
    for k, v in strata(p).items():
        share[k][v] += 1
caps = {k: {v: c * PAIRS // n + 2 for v, c in cnt.items()} for k, cnt in share.items()}
order = sorted(by_pair, key=lambda p: hashlib.sha256(("open-v2-validation\0" + p).encode()).hexdigest())
count = collections.defaultdict(collections.Counter)
sample = []
for p in order:
    st = strata(p)
    if any(count[k][v] >= caps[k][v] for k, v in st.items()):
        continue
    for k, v in st.items():
        count[k][v] += 1
    sample.append(p)
    if len(sample) == PAIRS:
        break
sample.sort()
sheets = {r: [] for r in "ABCD"}
keys = {r: [] for r in "ABCD"}
for k, p in enumerate(sample):
    team = ("A", "B") if k % 2 == 0 else ("C", "D")
    conds = ("explicit", "implicit") if (k // 2) % 2 == 0 else ("implicit", "explicit")
    for r, cond in zip(team, conds):
        s = by_pair[p][cond]
        item = f"v2-{r}{len(sheets[r]) + 1:03d}"
        sheets[r].append({
            "item": item,
            "setting": s["attributes"]["setting"], "activity": s["attributes"]["activity"],
            "other_device": s["attributes"]["devices"].split("(")[1].rstrip(")"),
            "speakers": {sp: VOICE[sp] for sp in s["speakers"]},
            "turns": [{"i": i, "speaker": t["speaker"], "text": t["text"]} for i, t in enumerate(s["turns"])],
        })
        keys[r].append((item, s["scenario_id"]))
with open(os.path.join(HERE, "sample.txt"), "w") as f:
    f.write(f"# The validation sample: {len(sample)} pairs; of each, one reviewer of a team saw the explicit version and the other the implicit one.\n")
    for p in sample:
        f.write(p + "\n")
for r in sheets:
    with open(os.path.join(HERE, f"blind-{r}.jsonl"), "w") as f:
        for it in sheets[r]:
            f.write(json.dumps(it) + "\n")
    with open(os.path.join(HERE, f"key-{r}.tsv"), "w") as f:
        for item, sid in keys[r]:
            f.write(f"{item}\t{sid}\n")
print(len(sample), {r: len(v) for r, v in sheets.items()}, {k: dict(v) for k, v in count.items()})
