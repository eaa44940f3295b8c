"""A plugin of every kind but model, for the SDK's process-level tests. Environment
variables switch on misbehaviour:

FIXTURE_BAD_SCHEMA=1   declare a config field of an unknown type (startup must fail)
FIXTURE_NOISY=1        print to stdout while describing, before the handshake
"""

import os
import sys
import time

import numpy as np

import duplexmpe_plugin as dp


class Fixture(dp.TTS, dp.ASR, dp.Judge, dp.LLM):
    name = "fixture"
    version = "1.2.3"
    config = (dp.ConfigField("greeting", dp.TYPE_STRING, default="hi"),)

    def describe(self):
        if os.environ.get("FIXTURE_NOISY"):
            print("loading weights... (this line must not break the handshake)")
        info = super().describe()
        if os.environ.get("FIXTURE_BAD_SCHEMA"):
            info.config = (dp.ConfigField("speed", "float"),)
        return info

    def configure(self, config):
        print(f"stdout: {config.get('greeting')}")
        print(f"stderr: {config.get('greeting')}", file=sys.stderr)
        os.write(1, b"raw fd 1\n")

    def voices(self):
        return [dp.Voice("a", "voice a", 8000)]

    def synthesize(self, text, voice):
        if text == "hang":  # plugin code stuck in a long call
            time.sleep(60)
        return dp.Audio(np.full(len(text), 0.25, dtype=np.float32), 8000)

    def transcribe(self, audio, language):
        return f"{len(audio.samples)} samples at {audio.rate} Hz"

    def judge_answer(self, q):
        raw = q.response + "".join(f" | accepted: {a}" for a in q.gold_accepted)
        if q.answer_type:
            raw += f" | type: {q.answer_type}"
        return dp.Verdict(dp.LABEL_CORRECT, True, raw=raw)

    def classify_speech(self, q):
        return dp.Verdict(dp.LABEL_INTRUSION, True, raw=q.transcript)

    def complete(self, req):
        return dp.Completion(content=req.messages[-1].content.upper(), model="fixture")


if __name__ == "__main__":
    dp.serve(Fixture())
