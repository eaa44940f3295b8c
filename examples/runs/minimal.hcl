# The smallest useful run file: one model, generated scenarios, the embedded TTS, ASR and
# judge. Relative paths resolve against this file's directory, so the plugins built by
# `make build` are two levels up. Check it with:
#
#   duplexmpe validate examples/runs/minimal.hcl
#
# The language is described in docs/run-files.md.

# Each plugin block says how to start one plugin process; other blocks refer to it as
# plugin.<name>.
plugin "flite" {
  source = "../../bin/plugins/flite"
}

# A baseline (it never speaks): role keeps it out of the statistics family of model
# comparisons (docs/protocol.md section 6.3). Put your own model here without a role.
plugin "silent" {
  source = "../../bin/plugins/silent"
  role   = "baseline"
}

plugin "pocketsphinx" {
  source = "../../bin/plugins/pocketsphinx"
}

plugin "lexical" {
  source = "../../bin/plugins/lexical-judge"
}

# Ten procedurally generated explicit/implicit pairs, spoken by flite.
dataset "small" {
  generate {
    generator = "procedural"
    pairs     = 10
    seed      = 7
  }
  tts    = plugin.flite
  voices = { A = "kal16", B = "awb", C = "rms", D = "slt" }
}

# Everything not set here takes its default: seed 1, concurrency 0 (one per CPU core), out = "runs/minimal"
# next to this file, and the protocol and VAD defaults of protocol section 8.
evaluation "minimal" {
  dataset = dataset.small
  models  = [plugin.silent]
  asr     = plugin.pocketsphinx
  judge   = plugin.lexical

  # Any protocol constant can be overridden; durations are strings or seconds.
  protocol {
    t_onset_window = "5s"
  }
}
