# A small run to take to a cluster: the silent and random-talk baselines over the shipped
# scenarios, scored with pocketsphinx and the lexical judge. The Slurm test
# (examples/deploy/slurm, `make test-slurm`) plays it as four shards and checks the merge
# against a single-machine run of this same file. Relative paths resolve against this
# file's directory; the dataset is the one bench.hcl builds (`make dataset`), so its clips
# are reused.
#
# A sharded run writes each shard into its own directory (`--var out=...`); every other
# setting must be the same on every shard, or `duplexmpe merge` refuses the directories.

variable "out" {
  default     = "../../runs/baselines"
  description = "The run directory; each shard of a sharded run gets its own (see docs/scale.md)."
}

variable "concurrency" {
  default     = 1
  description = "Conversations played at once by one shard."
}

plugin "flite" {
  source = "../../bin/plugins/flite"
}

plugin "silent" {
  source = "../../bin/plugins/silent"
}

plugin "random_talk" {
  source = "../../bin/plugins/random-talk"
}

plugin "pocketsphinx" {
  source = "../../bin/plugins/pocketsphinx"
}

plugin "lexical" {
  source = "../../bin/plugins/lexical-judge"
}

# The same block as bench.hcl's "shipped" dataset, built into the same directory.
dataset "shipped" {
  scenarios = "../scenarios"
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  preamble  = "default"
  out       = "../../build/datasets/shipped"
}

evaluation "baselines" {
  dataset     = dataset.shipped
  models      = [plugin.silent, plugin.random_talk]
  asr         = plugin.pocketsphinx
  judge       = plugin.lexical
  concurrency = var.concurrency
  out         = var.out
}
