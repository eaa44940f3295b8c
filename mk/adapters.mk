# The five model adapters (plugins/moshi, minicpm-o, flm-audio, freeze-omni, voila), in
# Python, and moshi-ws (Go, for a running Moshi or FLM-Audio server).
#
# `make test` runs their tests against numpy stand-ins of the model libraries
# (plugins/_standins) in the shared .venv, and moshi-ws against a Go stand-in server.
#
# `make test-adapters` is the upstream tier: the adapters on the real model code, on CPU,
# in a separate environment, .venv-adapters (torch from PyPI pulls the CUDA wheels: about
# 4.3 GB downloaded and 7.1 GB installed, so it stays out of the default path):
#   1. pytest over every adapter's tests/ and tests_real/ (stand-in signatures checked
#      against the real code, official loaders, step equivalence with upstream's loop);
#   2. the Go tests named TestUpstream* in UPSTREAM_GO_PKGS: plugin.py under the real
#      plugin host plays a whole shipped conversation (build/datasets/shipped, built by
#      dataset-check) with a tiny random model built by upstream's own constructors, and
#      moshi-ws talks to the real moshi.server started on a tiny checkpoint.
# Where upstream is not on PyPI, the tests read its checkout from one environment variable
# per model and skip, saying so, when it is unset (.ci/run points them at the upstream
# snapshots when the machine has them):
#   DUPLEXMPE_UPSTREAM_FLM_AUDIO  a checkout of cofe-ai/flm-audio (41d768c)
#   DUPLEXMPE_UPSTREAM_VOILA      a checkout of maitrix-org/Voila (6ba63bf)
#   DUPLEXMPE_UPSTREAM_FREEZE_OMNI a checkout of VITA-MLLM/Freeze-Omni (3e17af4)
#   DUPLEXMPE_UPSTREAM_MINICPMO   a checkout of OpenBMB/MiniCPM-o-Demo (28b60cf), optional:
#                                 re-reads the facts the MiniCPM-o stand-in is checked against
# Voila and Freeze-Omni have environments of their own: test-adapters-upstream below.
# moshi comes from PyPI (plugins/moshi/requirements.txt).

ADAPTER_DIRS := plugins/moshi plugins/minicpm-o plugins/flm-audio plugins/freeze-omni plugins/voila
# plugins/_common: the code the five share (SDK binding, smoke driver, config and factory
# helpers, test helpers), with its own tests.
PYTEST_PATHS += $(wildcard $(addsuffix /tests,$(ADAPTER_DIRS))) plugins/_common/tests

ADAPTERS_VENV := .venv-adapters
# The Go packages with TestUpstream* tests; each adapter's area appends its own.
UPSTREAM_GO_PKGS := ./plugins/moshi ./plugins/flm-audio ./plugins/moshi-ws

.PHONY: test-adapters deps-adapters

deps-adapters: $(ADAPTERS_VENV)/.installed

# transformers and accelerate (the versions plugins/minicpm-o pins) for the minicpm-o loader test.
$(ADAPTERS_VENV)/.installed: plugins/moshi/requirements.txt sdk/python/pyproject.toml mk/adapters.mk
	$(PYTHON) -m venv $(ADAPTERS_VENV)
	@echo '*' > $(ADAPTERS_VENV)/.gitignore
	cd plugins/moshi && ../../$(ADAPTERS_VENV)/bin/pip install -q --disable-pip-version-check -r requirements.txt \
		pytest transformers==4.51.0 accelerate==1.10.1
	@touch $@

test-adapters: deps deps-adapters build dataset-check
	$(ADAPTERS_VENV)/bin/python -m pytest -q -p no:cacheprovider $(wildcard $(addsuffix /tests,$(ADAPTER_DIRS))) plugins/_common/tests \
		$(wildcard $(addsuffix /tests_real,$(ADAPTER_DIRS)))
	DUPLEXMPE_ADAPTERS_PYTHON=$(CURDIR)/$(ADAPTERS_VENV)/bin/python \
		$(GO) test -count=1 -timeout 60m -run '^TestUpstream' -v $(UPSTREAM_GO_PKGS)

# The upstream tier of voila, freeze-omni and minicpm-o (plugins/*/tests_upstream and
# plugins/_common/tests_real): each adapter plays a shipped conversation through its plugin
# process under the real host (`duplexmpe run` on the shipped pair hand-08, stopped once a
# conversation is stored) against the upstream code with tiny random models on CPU
# (MiniCPM-o: its checked stand-in, both conversations), plus Voila's
# run_generate and Freeze-Omni's server.py equivalence tests, and every requirements.txt
# resolved by pip as its header says. Voila and Freeze-Omni run in environments of their
# own, installed from their requirements.txt exactly as the header says, because their
# pins conflict with the moshi environment's: Voila needs torch 2.8 (pyannote.audio 3.3.2
# uses torchaudio.AudioMetaData, gone in 2.9), Freeze-Omni torch 2.2 and transformers
# 4.45.2 (its TTS decoder reads the cache the Llama layers stopped returning in 4.48).
# Flask and socket.io are added to Freeze-Omni's for importing its bin/server.py. An
# environment is rebuilt from scratch when its requirements change (pip would not remove
# a dropped package). DUPLEXMPE_UPSTREAM_VOILA and DUPLEXMPE_UPSTREAM_FREEZE_OMNI name the
# checkouts (DUPLEXMPE_UPSTREAM_MINICPMO a MiniCPM-o-Demo one, optional); the tests skip,
# saying so, without them.
# Voila fixes its AudioTransformer at about 50 M parameters whatever the config says, and
# runs it on every model step: its shipped conversation plays a tiny model whose text head
# is biased to audio steps, one step per 40 ms frame (the test asserts the rate), a few
# minutes of CPU (plugins/voila/README.md). The plugin runs with one torch thread (shipped.py):
# two made Voila's float32 step 8 times slower on this loaded machine.
# The requirements are resolved by pip 25.3 in a venv under .cache/ (pip_resolve.py): its
# dry run downloads no wheel, where the venvs' pip 23 downloads 3-4 GB per adapter.
VOILA_VENV  := .venv-voila
FREEZE_VENV := .venv-freeze-omni

.PHONY: test-adapters-upstream

$(VOILA_VENV)/.installed: plugins/voila/requirements.txt sdk/python/pyproject.toml
	rm -rf $(VOILA_VENV) && $(PYTHON) -m venv $(VOILA_VENV) && echo '*' > $(VOILA_VENV)/.gitignore
	cd plugins/voila && ../../$(VOILA_VENV)/bin/pip install -q --disable-pip-version-check -r requirements.txt pytest
	@touch $@

$(FREEZE_VENV)/.installed: plugins/freeze-omni/requirements.txt sdk/python/pyproject.toml
	rm -rf $(FREEZE_VENV) && $(PYTHON) -m venv $(FREEZE_VENV) && echo '*' > $(FREEZE_VENV)/.gitignore
	cd plugins/freeze-omni && ../../$(FREEZE_VENV)/bin/pip install -q --disable-pip-version-check -r requirements.txt \
		pytest flask==3.0.3 flask_socketio==5.3.4 cryptography==50.0.2
	@touch $@

test-adapters-upstream: build dataset-check deps-adapters $(VOILA_VENV)/.installed $(FREEZE_VENV)/.installed
	$(ADAPTERS_VENV)/bin/python -m pytest -q -p no:cacheprovider plugins/_common/tests_real plugins/minicpm-o/tests_upstream
	OMP_NUM_THREADS=1 $(VOILA_VENV)/bin/python -m pytest -q -p no:cacheprovider plugins/voila/tests_upstream
	OMP_NUM_THREADS=1 $(FREEZE_VENV)/bin/python -m pytest -q -p no:cacheprovider plugins/freeze-omni/tests_upstream

test-adapters: test-adapters-upstream
