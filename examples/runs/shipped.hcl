# The harness's own test material, spoken by flite (fast): the 12 hand-written
# demonstration pairs of examples/scenarios (the adapters' upstream tests play one of
# them, from build/datasets/shipped; not benchmark content), and open v1's dev split,
# which `make test` builds with flite to check it against the release manifest (`dataset
# verify`) without the neural voices' cost (bench.hcl builds it with those). `make test`
# builds both (mk/dataset.mk):
#
#   duplexmpe build examples/runs/shipped.hcl

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

dataset "open_v1_dev_flite" {
  scenarios = "../../datasets/open-v1/dev"
  tts       = plugin.flite
  voices    = { A = "slt", B = "awb", C = "kal16", D = "rms" }
  preamble  = "default"
  out       = "../../build/datasets/open-v1-dev-flite"
}

dataset "open_v2_dev_flite" {
  scenarios = "../../datasets/open-v2/dev"
  tts       = plugin.flite
  voices    = { A = "slt", B = "awb", C = "kal16", D = "rms" }
  preamble  = "default"
  out       = "../../build/datasets/open-v2-dev-flite"
}

evaluation "shipped" {
  dataset = dataset.shipped
  models  = [plugin.silent]
  asr     = plugin.pocketsphinx
  judge   = plugin.lexical
  out     = "../../runs/shipped"
}
