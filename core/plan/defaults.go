package plan

// SecondsPerWord is how long flite takes to say a word of the scripts, for datasets not
// synthesised yet: measured on the shipped dataset (274 turns, 2,129 words, 798.6 s).
const SecondsPerWord = 0.375

// Defaults are the rates of a model with no measurement of its own, measured on the
// 2-core development machine (docs/scale.md): the harness's own play cost per
// conversation with the silent baseline (make bench-scale), the JSON files of an item,
// the scoring of a conversation with speech in it (pocketsphinx and the lexical judge,
// the baselines run), and as the audio an upper bound: 16-bit FLAC of a model that
// talks the whole conversation at 24 kHz. A model's RTF is never assumed.
var Defaults = Rates{
	PlayOverheadS: 1.3,
	DiskPerItem:   18e3,
	DiskPerAudioS: 28.8e3,
	ScorePerItemS: 2.5,
	Source:        "defaults measured on the development machine (docs/scale.md)",
}
