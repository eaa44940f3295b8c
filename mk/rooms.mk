# Rooms (issue 29): a dataset built under an acoustic condition (`room { preset = ... }`
# in a dataset block, docs/dataset.md "Rooms") gets each speaker's impulse response from
# tools/rooms (pyroomacoustics' image source method, in .venv-rooms). deps-rooms creates
# that environment (scripts/setup-rooms.sh: pinned wheels from PyPI; idempotent); make
# test needs it because core/construct's room tests run the real simulator.

DEPS += deps-rooms

.PHONY: deps-rooms

deps-rooms:
	@PYTHON=$(PYTHON) scripts/setup-rooms.sh
