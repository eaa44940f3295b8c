# Pinning plugins: a plugin block can require an exact version and an exact checksum.
# A plugin that does not match is refused before it runs, so a result can always be
# traced to the code that produced it. Check the pins with:
#
#   duplexmpe plugins examples/runs/pinned.hcl
#
# Relative paths resolve against this file's directory. See docs/run-files.md.

# A Python plugin is pinned by the h1: hash of its directory (hashing the interpreter
# would prove nothing). `duplexmpe lock` records it, and `duplexmpe plugins` prints it
# when the pin does not match. Editing, adding or removing any file under dir changes it;
# caches (__pycache__, .venv, *.pyc), run and lock files (*.hcl) and the folders the
# harness writes (run directories, score views, reports: they hold .duplexmpe-run.lock)
# are left out, so a run file kept in the plugin's folder (dir = ".") is fine.
plugin "quiet" {
  command  = ["sh", "run.sh"]
  dir      = "pinned-plugin"
  version  = "0.1.0"
  checksum = "h1:CxEEFjTn4cxknAFbkv0ijuT4iyfSWI4y7FQVdhpKdek="
}

# A Go plugin is an executable, pinned by "sha256:" and its sha256sum. `make build`
# builds every plugin reproducibly (-trimpath -buildvcs=false), so the hash moves with the
# plugin's code, its dependencies or the Go toolchain, not with each commit. Here only
# the version is pinned: `duplexmpe lock examples/runs/pinned.hcl` records the hash in
# pinned.lock.hcl next to this file, and every later command refuses a binary that no
# longer matches it, naming the file that changed.
plugin "beeper_go" {
  source  = "../../bin/plugins/plugin-go"
  version = "0.2.0"
  # checksum = "sha256:<64 hex digits from sha256sum>"
}

plugin "flite" {
  source = "../../bin/plugins/flite"
}

plugin "pocketsphinx" {
  source = "../../bin/plugins/pocketsphinx"
}

plugin "lexical" {
  source = "../../bin/plugins/lexical-judge"
}

dataset "shipped" {
  scenarios = "../scenarios"
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms", D = "slt" }
}

evaluation "pinned" {
  dataset = dataset.shipped
  models  = [plugin.beeper_go, plugin.quiet]
  asr     = plugin.pocketsphinx
  judge   = plugin.lexical
}
