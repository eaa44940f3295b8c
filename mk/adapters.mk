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
