# Moshi, served by its own process, over the shipped scenarios: the run that the
# Kubernetes manifests in kubernetes/ play as an Indexed Job, with the Moshi server as a
# sidecar of every shard's pod. The moshi-ws plugin drives a running server over its
# websocket (plugins/moshi-ws/README.md); the url below is the sidecar's, on the pod's
# loopback, and the same in every pod: it is part of the plugin's config, so of every
# item id, and shards of one run must agree on it.
#
# Relative paths resolve against this file's directory (in the image:
# /opt/duplexmpe/examples/deploy). Check it with `duplexmpe validate`.

variable "out" {
  default     = "../../runs/moshi-server"
  description = "The run directory; each shard of a sharded run gets its own (see docs/scale.md)."
}

variable "dataset_out" {
  default     = "../../build/datasets/shipped"
  description = "Where the dataset is built; on a cluster, storage every shard sees."
}

plugin "flite" {
  source = "../../bin/plugins/flite"
}

plugin "moshi" {
  source = "../../bin/plugins/moshi-ws"
  config {
    url = "ws://127.0.0.1:8998/api/chat"
  }
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
  preamble  = "default"
  out       = var.dataset_out
}

evaluation "moshi" {
  dataset = dataset.shipped
  models  = [plugin.moshi]
  asr     = plugin.pocketsphinx
  judge   = plugin.lexical
  out     = var.out
}
