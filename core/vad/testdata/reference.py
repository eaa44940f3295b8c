"""Computes reference.json: what the reference implementation (PyPI silero-vad 6.2.3, its
OnnxWrapper and get_speech_timestamps, on onnxruntime 1.32 from PyPI) says about the test
audio. Run by hand in a throwaway environment, never from the tests:

    python3 -m venv /tmp/silvenv && /tmp/silvenv/bin/pip install silero-vad onnxruntime soundfile
    /tmp/silvenv/bin/python core/vad/testdata/reference.py .cache/vad

The argument is the folder with silero_vad_v5.onnx and silero_vad_v6.onnx (make deps).
Episodes are in samples at 16 kHz. The Go segmenter keeps an episode exactly min_speech
long where get_speech_timestamps drops it; no episode here is that long.
"""
import json
import os
import sys

import soundfile
import torch
from silero_vad.utils_vad import OnnxWrapper, get_speech_timestamps

here = os.path.dirname(os.path.abspath(__file__))
models = sys.argv[1]

# Settings: protocol defaults, then variations that exercise the other branches.
settings = [
    dict(threshold=0.5, min_speech=0.120, merge_pause=0.800, speech_pad=0.0),
    dict(threshold=0.5, min_speech=0.120, merge_pause=0.100, speech_pad=0.0),
    dict(threshold=0.3, min_speech=0.250, merge_pause=0.300, speech_pad=0.030),
    dict(threshold=0.7, min_speech=0.500, merge_pause=0.050, speech_pad=0.600),
]

out = {"produced_by": "core/vad/testdata/reference.py (silero-vad 6.2.3 get_speech_timestamps, onnxruntime 1.32)", "files": {}}
for name in ["conversation_16k.wav", "speech_24k_sox16k.wav"]:
    audio, sr = soundfile.read(os.path.join(here, name), dtype="float32")
    assert sr == 16000
    wav = torch.from_numpy(audio)
    entry = {"num_samples": len(audio)}
    for model in ["silero-v5", "silero-v6"]:
        m = OnnxWrapper(os.path.join(models, "silero_vad_" + model[len("silero-"):] + ".onnx"), force_onnx_cpu=True)
        probs = m.audio_forward(wav, 16000)[0].tolist()
        runs = []
        for s in settings:
            eps = get_speech_timestamps(
                wav, m, threshold=s["threshold"], sampling_rate=16000,
                min_speech_duration_ms=s["min_speech"] * 1000,
                min_silence_duration_ms=s["merge_pause"] * 1000,
                speech_pad_ms=s["speech_pad"] * 1000)
            runs.append({"settings": s, "episodes": [[e["start"], e["end"]] for e in eps]})
        entry[model] = {"probs": probs, "runs": runs}
    out["files"][name] = entry

with open(os.path.join(here, "reference.json"), "w") as f:
    json.dump(out, f, indent=1)
    f.write("\n")
