# Duplex-MPE open v1, the test split (datasets/open-v1/test, docs/datasheet.md): every
# baseline and the reference cascade, scored like bench.hcl. Add your model's plugin block
# (without a role: it is under test) to the models list to evaluate it. Check it with
#
#   bin/duplexmpe validate examples/runs/open-v1.hcl
#   bin/duplexmpe plan examples/runs/open-v1.hcl          # what it costs before it starts
#
# and run it with `bin/duplexmpe run examples/runs/open-v1.hcl [--var gaps=natural]`.
# Relative paths resolve against this file's directory. bench.hcl plays the dev split.

variable "seed" {
  default     = 1
  description = "Seed for the models and the bootstrap (the dataset stays fixed)."
}

variable "gaps" {
  default     = "paper"
  description = "The gap profile (docs/protocol.md section 3.3): paper or natural."
}

# Offline neural voices (plugins/onnx-tts, docs/datasheet.md): Piper's joe and Kokoro-82M
# styles, chosen by make measure-tts; a narrator no speaker uses; every clip at -23 LUFS.
plugin "onnx_tts" {
  source = "../../bin/plugins/onnx-tts"
}

plugin "silent" {
  source = "../../bin/plugins/silent"
  role   = "baseline"
}

plugin "always_talk" {
  source = "../../bin/plugins/always-talk"
  role   = "baseline"
}

plugin "random_talk" {
  source = "../../bin/plugins/random-talk"
  role   = "baseline"
}

plugin "pause_responder" {
  source = "../../bin/plugins/pause-responder"
  role   = "baseline"
}

plugin "cascade" {
  source = "../../bin/plugins/cascade"
  role   = "reference"
}

plugin "whisper" {
  command = ["./run.sh"]
  dir     = "../../plugins/whisper"
}

plugin "lexical" {
  source = "../../bin/plugins/lexical-judge"
}

dataset "open_v1_test" {
  scenarios = "../../datasets/open-v1/test"
  tts       = plugin.onnx_tts
  voices    = { A = "jf_gongitsune", B = "joe", C = "jf_tebukuro", D = "jm_kumo" }
  narrator  = "jf_alpha"
  loudness  = -23
  preamble  = "default"
  out       = "../../build/datasets/open-v1-test"
}

evaluation "open_v1_test" {
  dataset = dataset.open_v1_test
  models  = [plugin.silent, plugin.always_talk, plugin.random_talk, plugin.pause_responder, plugin.cascade]
  asr     = plugin.whisper
  judge   = plugin.lexical
  seed    = var.seed
  out     = "../../runs/open-v1-test"
  protocol {
    gap_profile = var.gaps
  }
}
