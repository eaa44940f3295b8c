#!/usr/bin/env python3
"""Writers' self-check of a batch against BRIEF.md and assignments.tsv (a quick aid; the
authoritative checks are `duplexmpe dataset compile` and `duplexmpe dataset lint`).
Usage: check.py BATCH.jsonl"""
import csv, json, os, re, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ASSIGN = {r["pair_id"]: r for r in csv.DictReader(open(os.path.join(HERE, "assignments.tsv")), delimiter="\t")}
KEYS = {"pair_id", "attributes", "names", "turns", "implicit_previous", "cue", "cue_evidence",
        "gold_answer", "gold_accepted", "gold_derivation", "context_turns"}
LABELS = {"T", "N1", "N2", "N3", "N4_Q", "N4_R"}
ARIA = re.compile(r"\b(aria|arya|ari|ariana|maria)\b", re.I)
WAKE = {"Hey Siri": "siri", "Alexa": "alexa", "Hey Google": "google", "Hi Bixby": "bixby",
        "Hey Mercedes": "mercedes", "Hey Cortana": "cortana"}


def check(o, ln):
    errs = []
    e = errs.append
    o = dict(o)
    ipl = o.pop("implicit_previous_label", None)  # added after the blind review: N1 for a setup turn
    if ipl not in (None, "N1", "N3"):
        e(f"implicit_previous_label {ipl!r}")
    if set(o) != KEYS:
        e(f"keys differ: missing {sorted(KEYS - set(o))}, extra {sorted(set(o) - KEYS)}")
        return errs
    a = ASSIGN.get(o["pair_id"])
    if a is None:
        return [f"unknown pair_id {o['pair_id']}"]
    for k in ["setting", "activity", "relationship", "devices", "register"]:
        if o["attributes"].get(k) != a[k]:
            e(f"attribute {k} is {o['attributes'].get(k)!r}, assigned {a[k]!r}")
    turns = o["turns"]
    n, ti = int(a["turns"]), int(a["t_index"])
    if len(turns) != n:
        e(f"{len(turns)} turns, assigned {n}")
    spk = sorted({t.get("speaker") for t in turns})
    want = ["A", "B", "C", "D"][: int(a["speakers"])]
    if spk != want:
        e(f"speakers {spk}, assigned {want}")
    if sorted(o["names"]) != want:
        e(f"names for {sorted(o['names'])}, want {want}")
    for k, v in o["names"].items():
        if ARIA.search(v):
            e(f"name {v} sounds like Aria")
    labels = [t.get("label") for t in turns]
    if labels.count("T") != 1 or (ti < len(labels) and labels[ti] != "T"):
        e(f"T must be exactly once, at index {ti}")
    for need in ["N1", "N3"]:
        if need not in labels:
            e(f"no {need}")
    addr = [t.get("addressee") for t in turns if t.get("label") == "N2"]
    if "human" not in addr or "device" not in addr:
        e("need an N2 to a human and an N2 to a device")
    dev = a["devices"].split("(")[1].rstrip(")")
    for i, t in enumerate(turns):
        lab = t.get("label")
        if lab not in LABELS:
            e(f"turn {i}: label {lab!r}")
        if lab == "T":
            if set(t) != {"speaker", "label", "explicit", "implicit"}:
                e(f"turn {i}: T has keys {sorted(t)}")
                continue
            if not ARIA.search(t["explicit"]) or "aria" not in t["explicit"].lower():
                e("explicit T must say Aria")
            if ARIA.search(t["implicit"]):
                e("implicit T says Aria")
            texts = [t["explicit"], t["implicit"]]
        else:
            want_keys = {"speaker", "label", "text"} | ({"addressee"} if lab == "N2" else set())
            if set(t) != want_keys:
                e(f"turn {i}: keys {sorted(t)}, want {sorted(want_keys)}")
            texts = [t.get("text", "")]
            if lab == "N2" and t.get("addressee") == "device" and not t.get("text", "").startswith(dev):
                e(f"turn {i}: device turn should start with the wake word {dev!r}")
            if lab == "N2" and t.get("addressee") == "device" and "aria" in t.get("text", "").lower()[:12]:
                e(f"turn {i}: a device turn addressed to Aria")
        for x in texts:
            if re.search(r"[0-9]", x):
                e(f"turn {i}: digits in {x!r} (write numbers as words)")
            w = len(x.split())
            if w < 1 or w > 30:
                e(f"turn {i}: {w} words")
        if lab == "N4_Q":
            if "aria" not in t.get("text", "").lower():
                e(f"turn {i}: N4_Q must name Aria")
            if i + 1 >= len(turns) or turns[i + 1].get("label") != "N4_R":
                e(f"turn {i}: N4_Q not followed by N4_R")
            elif a["n4"] == "asker" and turns[i + 1]["speaker"] != t["speaker"]:
                e(f"turn {i}: N4 assigned asker-resolved")
            elif a["n4"] == "other" and turns[i + 1]["speaker"] == t["speaker"]:
                e(f"turn {i}: N4 assigned other-resolved")
        if lab in ("N1", "N2", "N3", "N4_R") and lab != "N1" and "aria" in t.get("text", "").lower() and lab != "N2":
            e(f"turn {i}: {lab} names Aria (only N1, N4_Q, explicit T and device N2 may)")
    nq = labels.count("N4_Q")
    if a["n4"] == "none" and nq:
        e("assigned no N4 event")
    if a["n4"] != "none" and nq != 1:
        e("assigned exactly one N4 event")
    if 0 < ti < len(turns):
        p = turns[ti - 1]
        if p.get("label") in ("N4_Q", "N4_R") or p.get("addressee") == "device":
            e("the turn before T is an N4 turn or a device turn")
        if ti + 1 < len(turns) and turns[ti + 1].get("label") in ("N4_Q", "N4_R"):
            e("the turn after T is an N4 turn")
    if o["cue"] != a["cue"]:
        e(f"cue {o['cue']}, assigned {a['cue']}")
    ip = o["implicit_previous"]
    if o["cue"] == "setup":
        if not ip:
            e("cue setup needs implicit_previous")
        elif ARIA.search(ip):
            e("implicit_previous says Aria")
        elif ti > 0 and turns[ti - 1].get("speaker") == turns[ti].get("speaker"):
            e("setup: the turn before T should be by another speaker")
    elif ip is not None:
        e("implicit_previous only for cue setup")
    if 0 < ti and "aria" in turns[ti - 1].get("text", "").lower() and o["cue"] != "setup":
        e("the turn before T names Aria (the implicit version would be cued by the name)")
    if not o["gold_answer"] or len(o["gold_answer"]) > 40:
        e("gold_answer empty or long")
    if not isinstance(o["gold_accepted"], list):
        e("gold_accepted must be a list")
    asker = turns[ti]["speaker"] if ti < len(turns) else None
    ct = o["context_turns"]
    if a["context_fact"] == "yes":
        if not ct:
            e("context_fact yes: list context_turns")
        for c in ct:
            if not (0 <= c < ti):
                e(f"context turn {c} not before T")
            elif turns[c]["speaker"] == asker:
                e(f"context turn {c} is by the asker")
    elif ct:
        e("context_fact no: context_turns must be []")
    return errs


def main():
    bad = 0
    seen = 0
    for ln, line in enumerate(open(sys.argv[1]), 1):
        if not line.strip():
            continue
        seen += 1
        try:
            o = json.loads(line)
        except Exception as x:
            print(f"line {ln}: not JSON: {x}")
            bad += 1
            continue
        for m in check(o, ln):
            print(f"line {ln} {o.get('pair_id')}: {m}")
            bad += 1
    print(f"{seen} pairs, {bad} problems")
    sys.exit(1 if bad else 0)


main()
