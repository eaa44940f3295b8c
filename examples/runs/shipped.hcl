# The 12 hand-written demonstration pairs of examples/scenarios, spoken by flite: the
# harness's own test material (the adapters' upstream tests play one of them, from
# build/datasets/shipped). Not benchmark content: Duplex-MPE open v1 (datasets/open-v1,
# docs/datasheet.md) is. `make test` builds it (mk/dataset.mk):
#
#   duplexmpe build --dataset shipped examples/runs/shipped.hcl

plugin "flite" {
  source = "../../bin/plugins/flite"
}

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

dataset "shipped" {
  scenarios = "../scenarios"
  tts       = plugin.flite
  voices    = { A = "kal16", B = "awb", C = "rms", D = "slt" }
  preamble  = "default"
  out       = "../../build/datasets/shipped"
}

evaluation "shipped" {
  dataset = dataset.shipped
  models  = [plugin.silent]
  asr     = plugin.pocketsphinx
  judge   = plugin.lexical
  out     = "../../runs/shipped"
}
