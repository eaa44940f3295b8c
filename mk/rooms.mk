# Rooms (issue 29): a dataset built under an acoustic condition (`room { preset = ... }`
# in a dataset block, docs/dataset.md "Rooms") gets each speaker's impulse response from
# tools/rooms (pyroomacoustics' image source method, in .venv-rooms). deps-rooms creates
# that environment (scripts/setup-rooms.sh: pinned wheels from PyPI; idempotent); make
# test needs it because core/construct's room tests run the real simulator.

DEPS += deps-rooms

.PHONY: deps-rooms

deps-rooms:
	@PYTHON=$(PYTHON) scripts/setup-rooms.sh

# `make measure-rooms`: Whisper tiny.en's word error rate on every request turn of each
# built set in MEASURE_ROOMS_SETS, as a model hears it (a room's clip with its background
# under it): the datasheet's figures per acoustic condition. Build the sets first:
#   bin/duplexmpe build bench.hcl --var room=living-room   (and kitchen, car)
MEASURE_ROOMS_SETS ?= $(wildcard build/datasets/open-v2-dev build/datasets/open-v2-dev-living-room build/datasets/open-v2-dev-kitchen build/datasets/open-v2-dev-car)

.PHONY: measure-rooms
measure-rooms: deps build
	DUPLEXMPE_MEASURE_ASR=1 MEASURE_ROOMS_SETS="$(abspath $(MEASURE_ROOMS_SETS))" \
		$(GO) test -count=1 -timeout 60m ./tests/measureasr -run TestMeasureConditionWER -v
