"""Writes upstream.json: what the upstream front ends make of the test sentences, for
the Go tests to compare with (phonemize_test.go). Not run by the tests; rerun by hand
after changing the sentences, in a scratch venv with
    pip install piper-phonemize==1.1.0 phonemizer==3.3.0 espeakng-loader==0.2.4
    pip install --no-deps misaki==0.9.4
and Debian's espeak-ng installed:
    python upstream.py ../../../../.cache/tts/piper-joe/en_US-joe-medium.onnx.json > upstream.json

piper: piper_phonemize.phonemize_espeak (rhasspy's espeak-ng fork, bundled in the wheel)
and piper's own phonemes_to_ids (src/python_run/piper/voice.py: BOS, PAD, each phoneme
and PAD, EOS, unknown phonemes dropped) with the voice's phoneme_id_map.
kokoro: misaki's EspeakFallback (American), run on Debian's libespeak-ng (the one the
plugin runs as a process), whole sentences.
"""
import json
import sys
import types

SENTENCES = [
    "Hello, Aria. The bus leaves at seven fifty, right?",
    "Could you pass me the salt, please?",
    "I think the train leaves at half past seven.",
    "Aria, how long do we need to boil the pasta?",
    "We still need milk, eggs and a loaf of bread.",
    "Honestly, I have no idea where I left my keys!",
    "The tickets were forty dollars each; that's a lot.",
    "Note: the meeting moved to Thursday afternoon.",
    "Okay, never mind, I found it.",
    "She said the code is three three one nine.",
    "Wait... is the library open on Sunday?",
    "It's twenty-two degrees outside, isn't it?",
]


def piper(config_path):
    import piper_phonemize
    cfg = json.load(open(config_path, encoding="utf-8"))
    id_map = cfg["phoneme_id_map"]
    out = {}
    for s in SENTENCES:
        sentences = piper_phonemize.phonemize_espeak(s, cfg["espeak"]["voice"])
        ids_all = []
        for phonemes in sentences:
            ids = list(id_map["^"])
            ids.extend(id_map["_"])
            for p in phonemes:
                if p not in id_map:
                    continue
                ids.extend(id_map[p])
                ids.extend(id_map["_"])
            ids.extend(id_map["$"])
            ids_all.append(ids)
        out[s] = {"phonemes": ["".join(p) for p in sentences], "ids": ids_all}
    return out


def kokoro():
    from phonemizer.backend.espeak.wrapper import EspeakWrapper
    import misaki.espeak as me
    EspeakWrapper.set_library("/usr/lib/x86_64-linux-gnu/libespeak-ng.so.1")
    EspeakWrapper.set_data_path("/usr/lib/x86_64-linux-gnu/espeak-ng-data")
    fb = me.EspeakFallback(british=False)
    return {s: fb(types.SimpleNamespace(text=s))[0] for s in SENTENCES}


if __name__ == "__main__":
    json.dump({"piper": piper(sys.argv[1]), "kokoro": kokoro()}, sys.stdout, ensure_ascii=False, indent=1)
    print()
