// Package browsertest holds the report's browser tests: a real run (flite, real plugin
// processes, pocketsphinx, the lexical judge) through the duplexmpe CLI, whose
// report.html and conversation pages are then opened from disk in headless Chromium
// (Debian's chromium, driven with chromedp) and used as a reader would: no console
// errors, the tables and charts fit the page at 1280 and 390 px, every table cell opens
// exactly the events it counts, the filters change what is shown, and a link opens the
// right conversation with its timeline and a stereo recording the cursor follows.
// Screenshots at both widths are written to build/screenshots/ (ignored by git; set
// DUPLEXMPE_SCREENSHOTS to put them elsewhere). The package has no non-test code.
package browsertest
