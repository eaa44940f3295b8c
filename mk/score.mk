# Scoring (core/score, core/stats, explain) and the two embedded scoring plugins.
# plugins/pocketsphinx is built with cgo against Debian's libpocketsphinx-dev and
# libsphinxbase-dev (pkg-config pocketsphinx); deps-pocketsphinx installs them when
# missing. `make fuzz-score` fuzzes the explain parser and the lexical judge's normaliser
# (go test runs only their seed corpora). `make bench-score` measures the model-comparison
# bootstrap and Summarize at paper scale, PocketSphinx's decoding speed and the lexical
# judge.

DEPS        += deps-pocketsphinx

.PHONY: deps-pocketsphinx fuzz-score bench-score

deps-pocketsphinx:
	@missing=""; for p in libpocketsphinx-dev libsphinxbase-dev pocketsphinx-en-us; do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
		echo "installing Debian packages:$$missing"; \
		sudo=""; [ "$$(id -u)" -ne 0 ] && sudo="sudo"; \
		$$sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing; \
	fi

fuzz-score:
	$(GO) test ./core/cli -run '^$$' -fuzz FuzzParseExplainInput -fuzztime 30s
	$(GO) test ./plugins/lexical-judge/lexical -run '^$$' -fuzz FuzzNormalize -fuzztime 30s
	$(GO) test ./core/score -run '^$$' -fuzz FuzzEvents -fuzztime 30s

bench-score:
	$(GO) test ./core/stats ./core/score ./plugins/pocketsphinx/sphinx ./plugins/lexical-judge/lexical -run '^$$' -bench . -benchtime 3x

# measure-asr (word error rates of every ASR plugin) is in mk/asr.mk.

# After a change of core/score's verdicts: bump score.RulesVersion (core/score/rules.go),
# then record the new digest of TestRulesVersion's corpus in core/score/testdata/rules.golden.
.PHONY: score-rules
score-rules:
	$(GO) test ./core/score -run TestRulesVersion -update-rules
