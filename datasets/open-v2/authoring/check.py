#!/usr/bin/env python3
"""Writers' self-check of an open v2 batch against BRIEF.md and assignments.tsv (an aid; the
authoritative checks are `duplexmpe dataset compile`, `lint` and `audit`).
Usage: check.py BATCH.jsonl [--quiet]. Exit 0 when the batch has no problem."""
import csv, glob, json, os, re, sys
from collections import Counter

HERE = os.path.dirname(os.path.abspath(__file__))
ASSIGN = {r["pair_id"]: r for r in csv.DictReader(open(os.path.join(HERE, "assignments.tsv")), delimiter="\t")}
KEYS = {"pair_id", "attributes", "names", "turns", "implicit_previous", "cue", "cue_text", "cue_evidence",
        "gold_answer", "gold_accepted", "gold_derivation", "context_turns", "task", "addressing", "answer_type"}
OPTIONAL = {"implicit_previous_label"}
LABELS = {"T", "N1", "N2", "N3", "N4_Q", "N4_R"}
LIKE_ARIA = re.compile(r"\b(aria|arya|ari|ariana|maria|aaliyah|carrie)\b", re.I)
ARIA = re.compile(r"\baria\b", re.I)
# dataset.AddressingOf, the same expressions
HEY = re.compile(r"(?i)\b(hey|hi|okay|ok)\s*,?\s+aria\b")
ALONE = re.compile(r"(?i)^\W*aria\s*(\?|!|\.|…|—|-)+\s*\S")
OPEN = re.compile(r"(?i)^\W*aria\b")
END = re.compile(r"(?i)\baria\W*$")
TAGS = {"n1_addresses_aria": ("N1", None), "n1_about_aria": ("N1", None),
        "n2_device_mentions_aria": ("N2", "device"), "n2_lookalike_request": ("N2", "human"),
        "role_cue_to_human": ("N2", "human")}
WAKE = {"Hey Siri": "Hey Siri", "Alexa": "Alexa", "Hey Google": "Hey Google", "Hi Bixby": "Hi Bixby",
        "Hey Mercedes": "Hey Mercedes", "Hey Cortana": "Hey Cortana"}
# v1's stock frames and vocatives that stand in for a name: never in an implicit T or the turn before it
STOCK = [r"\byou'?re keeping the\b", r"\bbeen listening\b", r"\bthe one that'?s\b", r"\bquick one for\b",
         r"\bquestion for\b", r"^\W*(ok(ay)?|right|so|hey)?\W*(assistant|computer|machine|speaker|device|robot)\b",
         r"\bwhatever'?s\b", r"\bwhoever'?s (been )?listening\b"]
ANSWER_TYPES = {"number", "money", "duration", "clock_time", "date", "name", "yes_no", "code", "text"}


def addressing_of(text):
    if not ARIA.search(text):
        return ""
    if HEY.search(text):
        return "hey"
    if ALONE.search(text):
        return "name-alone"
    if OPEN.search(text):
        return "opening"
    if END.search(text):
        return "end"
    return "mid"


def words(s):
    return re.findall(r"[a-z0-9']+", s.lower().replace("\u2019", "'"))


def check(o):
    errs = []
    e = errs.append
    o = dict(o)
    ipl = o.pop("implicit_previous_label", None)
    if ipl not in (None, "N1", "N2", "N3"):
        e(f"implicit_previous_label {ipl!r}")
    if set(o) != KEYS:
        return [f"keys differ: missing {sorted(KEYS - set(o))}, extra {sorted(set(o) - KEYS)}"]
    a = ASSIGN.get(o["pair_id"])
    if a is None:
        return [f"unknown pair_id {o['pair_id']}"]
    for k in ["setting", "activity", "relationship", "devices", "register"]:
        if o["attributes"].get(k) != a[k]:
            e(f"attribute {k} is {o['attributes'].get(k)!r}, assigned {a[k]!r}")
    for k in ["task", "answer_type", "addressing", "cue"]:
        if o[k] != a[k]:
            e(f"{k} is {o[k]!r}, assigned {a[k]!r}")
    turns = o["turns"]
    n, ti = int(a["turns"]), int(a["t_index"])
    if len(turns) != n:
        e(f"{len(turns)} turns, assigned {n}")
    k = int(a["speakers"])
    want = ["A", "B", "C", "D"][:k]
    spk = Counter(t.get("speaker") for t in turns)
    if sorted(spk) != want:
        e(f"speakers {sorted(spk)}, assigned {want}")
    lo, hi = len(turns) // k - 1, -(-len(turns) // k) + 1
    for s, c in spk.items():
        if not lo <= c <= hi:
            e(f"speaker {s} has {c} turns; give each speaker {lo} to {hi} (turns spread evenly)")
    if sorted(o["names"]) != want:
        e(f"names for {sorted(o['names'])}, want {want}")
    for s, v in o["names"].items():
        if LIKE_ARIA.search(v):
            e(f"name {v} sounds like Aria")
    labels = [t.get("label") for t in turns]
    if labels.count("T") != 1 or ti >= len(labels) or labels[ti] != "T":
        e(f"T must be exactly once, at index {ti}")
        return errs
    if turns[ti].get("speaker") != a["t_speaker"]:
        e(f"T spoken by {turns[ti].get('speaker')}, assigned {a['t_speaker']}")
    cnt = Counter((t.get("label"), t.get("addressee")) for t in turns)
    if labels.count("N1") != int(a["n1"]):
        e(f"{labels.count('N1')} N1 turns, assigned {a['n1']}")
    if cnt[("N2", "device")] != int(a["n2_device"]):
        e(f"{cnt[('N2', 'device')]} N2 device turns, assigned {a['n2_device']}")
    if labels.count("N3") != int(a["n3"]):
        e(f"{labels.count('N3')} N3 turns, assigned {a['n3']}")
    if labels.count("N4_Q") != int(a["n4"]) or labels.count("N4_R") != int(a["n4"]):
        e(f"{labels.count('N4_Q')} N4_Q and {labels.count('N4_R')} N4_R, assigned {a['n4']} N4 events")
    n1s = sorted(t["speaker"] for t in turns if t.get("label") == "N1")
    if a["n1_speakers"] != "-" and n1s != sorted(a["n1_speakers"].split(",")):
        e(f"N1 spoken by {n1s}, assigned {sorted(a['n1_speakers'].split(','))}")
    q = [t["speaker"] for t in turns if t.get("label") == "N4_Q"]
    if a["n4_askers"] != "-" and sorted(q) != sorted(a["n4_askers"].split(",")):
        e(f"N4_Q asked by {q}, assigned {a['n4_askers']}")
    dev = a["devices"].split("(")[1].rstrip(")")
    want_tags = [t for t in a["hard_negatives"].split(",") if t in TAGS]
    got_tags = Counter()
    resolvers = []
    for i, t in enumerate(turns):
        lab = t.get("label")
        if lab not in LABELS:
            e(f"turn {i}: label {lab!r}")
            continue
        if lab == "T":
            if set(t) != {"speaker", "label", "explicit", "implicit"}:
                e(f"turn {i}: T has keys {sorted(t)}")
                continue
            texts = [t["explicit"], t["implicit"]]
            if addressing_of(t["explicit"]) != a["addressing"]:
                e(f"explicit T reads as addressing {addressing_of(t['explicit'])!r}, assigned {a['addressing']!r}")
            if LIKE_ARIA.search(t["implicit"]):
                e("implicit T names Aria")
            for pat in STOCK:
                if re.search(pat, t["implicit"], re.I):
                    e(f"implicit T uses a stock frame or a stand-in vocative ({pat})")
        else:
            allowed = {"speaker", "label", "text", "tags"} | ({"addressee"} if lab == "N2" else set())
            if not set(t) <= allowed or "text" not in t:
                e(f"turn {i}: keys {sorted(t)}")
                continue
            if lab == "N2" and t.get("addressee") not in ("human", "device"):
                e(f"turn {i}: N2 needs addressee human or device")
            texts = [t["text"]]
            if lab == "N2" and t.get("addressee") == "device":
                if not t["text"].startswith(dev):
                    e(f"turn {i}: a device turn starts with the wake word {dev!r}")
            named = ARIA.search(t["text"])
            if named and lab in ("N3", "N4_R") or named and lab == "N2" and t.get("addressee") == "human":
                e(f"turn {i}: {lab} {t.get('addressee') or ''} names Aria (rule 4: a turn that names Aria and asks her nothing is N1)")
            if lab == "N4_Q":
                if not named:
                    e(f"turn {i}: N4_Q must name Aria")
                if i + 1 >= len(turns) or turns[i + 1].get("label") != "N4_R":
                    e(f"turn {i}: N4_Q not followed by N4_R")
                else:
                    resolvers.append("asker" if turns[i + 1]["speaker"] == t["speaker"] else "other")
            for tag in t.get("tags", []):
                if tag not in TAGS:
                    e(f"turn {i}: tag {tag!r} unknown")
                    continue
                wl, wa = TAGS[tag]
                if lab != wl or (wa and t.get("addressee") != wa):
                    e(f"turn {i}: tag {tag} belongs on {wl} {wa or ''}")
                if tag in ("n1_addresses_aria", "n2_device_mentions_aria", "n1_about_aria") and not named:
                    e(f"turn {i}: tag {tag} on a turn that does not name Aria")
                if tag == "n1_about_aria" and "?" not in t["text"]:
                    e(f"turn {i}: n1_about_aria is a question to a person about Aria, with a question mark")
                if tag in ("n2_lookalike_request", "role_cue_to_human") and not any(
                        nm.lower() in w for nm in o["names"].values() for w in [t["text"].lower()]):
                    e(f"turn {i}: {tag} names the person it asks")
                got_tags[tag] += 1
        for x in texts:
            if re.search(r"[0-9]", x):
                e(f"turn {i}: digits in {x!r} (write numbers as words)")
            if re.search(r"[()\[\]{}*#@<>]|[\U0001F300-\U0001FAFF]", x):
                e(f"turn {i}: brackets, symbols or emoji in {x!r}")
            w = len(x.split())
            if w < 3 or w > 28:
                e(f"turn {i}: {w} words (write 4 to 25)")
    if a["n4_resolver"] != "-" and resolvers != a["n4_resolver"].split(","):
        e(f"N4 events resolved by {resolvers}, assigned {a['n4_resolver']}")
    for tag in want_tags:
        if not got_tags[tag]:
            e(f"assigned hard negative {tag} is on no turn")
    for tag in got_tags:
        if tag not in want_tags:
            e(f"hard negative {tag} was not assigned here")
    for j in (ti - 1, ti + 1):
        if 0 <= j < len(turns) and turns[j].get("label") in ("N4_Q", "N4_R"):
            e("an N4 turn right before or after T")
    if turns[ti - 1].get("addressee") == "device":
        e("the turn before T is a device turn")
    ip = o["implicit_previous"]
    if o["cue"] == "setup":
        if not ip:
            e("cue setup needs implicit_previous")
        elif LIKE_ARIA.search(ip):
            e("implicit_previous says Aria")
        elif turns[ti - 1].get("speaker") == turns[ti].get("speaker"):
            e("setup: the turn before T should be by another speaker")
        if ip and re.search(r"[0-9]", ip):
            e("digits in implicit_previous")
    elif ip is not None:
        e("implicit_previous only for cue setup")
    prev_impl = ip if ip else turns[ti - 1].get("text", "")
    if ARIA.search(prev_impl):
        e("the implicit version's turn before T names Aria (the name would cue the request)")
    for pat in STOCK:
        if re.search(pat, prev_impl, re.I):
            e(f"the implicit turn before T uses a stock frame ({pat})")
    impl_upto = " ".join([t.get("text", "") for t in turns[:ti - 1]] + [prev_impl, turns[ti].get("implicit", "")])
    if not o["cue_text"].strip() or o["cue_text"] not in impl_upto:
        e("cue_text must be copied exactly from the implicit T or a turn before it")
    if not o["cue_evidence"].strip():
        e("cue_evidence is empty")
    if not o["gold_answer"].strip() or len(o["gold_answer"]) > 60:
        e("gold_answer empty or long")
    if not isinstance(o["gold_accepted"], list):
        e("gold_accepted must be a list")
    if not o["gold_derivation"].strip():
        e("gold_derivation is empty")
    g = words(o["gold_answer"])
    if o["answer_type"] == "yes_no":
        want = "yes" if "gold_yes" in a["hard_negatives"] else "no"
        if not g or g[0] != want:
            e(f"gold must open with {want!r}")
    elif g and g[0] in ("yes", "no"):
        e("gold opens with yes or no, but the answer type is not yes_no")
    asker = turns[ti]["speaker"]
    ct = o["context_turns"]
    if not isinstance(ct, list):
        e("context_turns must be a list")
        ct = []
    for c in ct:
        if not (isinstance(c, int) and 0 <= c < ti):
            e(f"context turn {c} not before T")
    if a["context_fact"] == "yes" and not any(isinstance(c, int) and 0 <= c < ti and turns[c]["speaker"] != asker for c in ct):
        e("context_fact yes: context_turns must hold a turn by someone other than the asker")
    if a["context_fact"] == "no" and o["task"] != "general-knowledge" and ct and all(turns[c]["speaker"] != asker for c in ct if 0 <= c < ti):
        pass
    return errs


def main():
    path = sys.argv[1]
    bad, seen, texts, impl = 0, 0, Counter(), []
    n3, n3dots = 0, 0
    for ln, line in enumerate(open(path), 1):
        if not line.strip():
            continue
        seen += 1
        try:
            o = json.loads(line)
        except Exception as x:
            print(f"line {ln}: not JSON: {x}")
            bad += 1
            continue
        for m in check(o):
            print(f"line {ln} {o.get('pair_id')}: {m}")
            bad += 1
        try:
            ti = int(ASSIGN[o["pair_id"]]["t_index"])
            for t in o["turns"]:
                if t.get("label") == "N3":
                    n3 += 1
                    n3dots += "..." in t.get("text", "") or "…" in t.get("text", "")
                for x in (t.get("text"), t.get("explicit"), t.get("implicit")):
                    if x:
                        texts[" ".join(words(x))] += 1
            prev = o["implicit_previous"] or o["turns"][ti - 1].get("text", "")
            impl.append((o["pair_id"], prev, o["turns"][ti].get("implicit", "")))
        except Exception:
            pass
    # Lines reused within this batch or from the other batches.
    others = Counter()
    for f in glob.glob(os.path.join(HERE, "batch-*.jsonl")):
        if os.path.abspath(f) == os.path.abspath(path):
            continue
        for line in open(f):
            try:
                for t in json.loads(line)["turns"]:
                    for x in (t.get("text"), t.get("explicit"), t.get("implicit")):
                        if x:
                            others[" ".join(words(x))] += 1
            except Exception:
                pass
    for x, c in texts.items():
        if len(x.split()) >= 4 and (c > 1 or others[x]):
            print(f"reused line ({c} here, {others[x]} in other batches): {x!r}")
            bad += 1
    if n3 and n3dots * 2 > n3 + 1:
        print(f"'...' marks {n3dots} of {n3} N3 turns: write at least half without it")
        bad += 1
    grams = Counter()
    for _, prev, t in impl:
        g = set()
        for s in (prev, t):
            w = words(s)
            g |= {" ".join(w[i:i + 3]) for i in range(len(w) - 2)}
        grams.update(g)
    if impl:
        limit = max(2, int(0.04 * len(impl)))
        for g, c in grams.most_common(10):
            if c > limit:
                print(f"phrase {g!r} in {c} of {len(impl)} implicit requests (with the turn before): at most {limit}; reword")
                bad += 1
    print(f"{seen} pairs, {bad} problems")
    sys.exit(1 if bad else 0)


main()
