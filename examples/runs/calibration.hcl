# The calibration run: the two talking baselines, over bench.hcl's dataset (the same
# block, so its clips are reused), scored like bench.hcl. always-talk speaks for the whole
# session and shows the measures' floor from above: fresh onset 0 (it is already
# speaking when every T ends), presence 1.0, silence preservation 0 (speech overlaps every
# window; only an acknowledgement would pass), no eligible N4 event. random-talk talks in
# random bursts and shows chance.
#
# Neither is part of `make run` because they are expensive to score, not to play:
# random-talk's bursts are about a third of what make run would transcribe with it. For
# always-talk, under the paper's answer rule the answer to T runs from the start of the
# episode active at tE (its one episode, from the session's first frame) to the next turn,
# which the scheduler starts only when t_wait_cap (60 s) has passed, so each answer is
# about 120 s of speech and each conversation about 150 s to transcribe. Run it with
#
#   bin/duplexmpe run examples/runs/calibration.hcl
#
# (README.md says how long it took). Relative paths resolve against this file's directory.

variable "seed" {
  default     = 1
  description = "Seed for the model and the bootstrap."
}

variable "gaps" {
  default     = "natural"
  description = "The gap profile, as bench.hcl's: natural or paper."
}

# Offline neural voices (plugins/onnx-tts, docs/datasheet.md), as bench.hcl's.
plugin "onnx_tts" {
  source = "../../bin/plugins/onnx-tts"
}

plugin "always_talk" {
  source = "../../bin/plugins/always-talk"
  role   = "baseline"
}

plugin "random_talk" {
  source = "../../bin/plugins/random-talk"
  role   = "baseline"
}

plugin "whisper" {
  command = ["./run.sh"]
  dir     = "../../plugins/whisper"
}

plugin "lexical" {
  source = "../../bin/plugins/lexical-judge"
}

# bench.hcl's dataset block, paths relative to this file (TestCalibrationRunsTheBenchDataset).
dataset "open_v2_dev" {
  scenarios  = "../../datasets/open-v2/dev"
  tts        = plugin.onnx_tts
  voice_pool = {
    women = { af_heart = 194, af_bella = 193, af_nicole = 141, bf_emma = 180, bf_isabella = 206, bf_alice = 224 }
    men   = { am_michael = 113, am_fenrir = 136, am_puck = 125, bm_fable = 123, bm_lewis = 92, bm_george = 143 }
  }
  narrator = "af_sarah"
  loudness = -23
  preamble = "default"
  out      = "../../build/datasets/open-v2-dev"
}

evaluation "calibration" {
  dataset = dataset.open_v2_dev
  models  = [plugin.always_talk, plugin.random_talk]
  asr     = plugin.whisper
  judge   = plugin.lexical
  seed    = var.seed
  out     = "../../runs/calibration"
  protocol {
    gap_profile = var.gaps
  }
}
