# Duplex-MPE open v2, the test split (datasets/open-v2/test, docs/datasheet-v2.md): every
# baseline, the reference cascade and the oracle, scored like bench.hcl, under the natural
# gap profile (the paper's fixed schedule is --var gaps=paper). Add your model's plugin block
# (without a role: it is under test) to the models list to evaluate it. Check it with
#
#   bin/duplexmpe validate examples/runs/open-v2.hcl
#   bin/duplexmpe plan examples/runs/open-v2.hcl          # what it costs before it starts
#
# and run it with `bin/duplexmpe run examples/runs/open-v2.hcl [--var gaps=paper]`.
# Relative paths resolve against this file's directory. bench.hcl plays the dev split.

variable "seed" {
  default     = 1
  description = "Seed for the models and the bootstrap (the dataset stays fixed)."
}

variable "gaps" {
  default     = "natural"
  description = "The gap profile (docs/protocol.md section 3.3): natural or paper."
}

# Offline neural voices (plugins/onnx-tts, docs/datasheet.md), drawn per scenario from
# bench.hcl's English pool; every clip at -23 LUFS.
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

plugin "oracle" {
  source = "../../bin/plugins/oracle"
  role   = "calibration"
  config {
    dataset = "../../build/datasets/open-v2-test"
  }
}

plugin "whisper" {
  command = ["./run.sh"]
  dir     = "../../plugins/whisper"
}

plugin "lexical" {
  source = "../../bin/plugins/lexical-judge"
}

dataset "open_v2_test" {
  scenarios  = "../../datasets/open-v2/test"
  tts        = plugin.onnx_tts
  voice_pool = {
    women = { af_heart = 194, af_bella = 193, af_nicole = 141, bf_emma = 180, bf_isabella = 206, bf_alice = 224 }
    men   = { am_michael = 113, am_fenrir = 136, am_puck = 125, bm_fable = 123, bm_lewis = 92, bm_george = 143 }
  }
  narrator = "af_sarah"
  loudness = -23
  preamble = "default"
  out      = "../../build/datasets/open-v2-test"
}

evaluation "open_v2_test" {
  dataset = dataset.open_v2_test
  models  = [plugin.silent, plugin.always_talk, plugin.random_talk, plugin.pause_responder, plugin.cascade, plugin.oracle]
  asr     = plugin.whisper
  judge   = plugin.lexical
  seed    = var.seed
  out     = "../../runs/open-v2-test"
  protocol {
    gap_profile = var.gaps
  }
}
