# The report's viewer (core/report/viewer: report.html's explorer, viewer/<id>.html and .wav) and
# its browser tests (core/report/browsertest), which drive Debian's headless Chromium
# with chromedp. `make test` installs chromium before the Go tests run; `make run` does
# not need it. The tests keep screenshots at 1280 and 390 px in build/screenshots/.

.PHONY: deps-chromium test-browser

go-test: deps-chromium

deps-chromium:
	@scripts/install-apt.sh chromium

# Only the browser tests (a real run of one scenario pair, then Chromium): 2.5-3.5 min.
test-browser: deps deps-chromium build
	$(GO) test -count=1 -v ./core/report/browsertest/
