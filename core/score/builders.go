package score

// NewRate is k successes of n as every table reports it: the rate, its Wilson 95%
// interval and its text, "n/a (n=0)" when n = 0. Other tracks (the text reference of
// core/reference) build their rates with it, so that the same counts read the same
// everywhere.
func NewRate(k, n int) Rate { return newRate(k, n, 0) }

// NewMcNemar is the exact McNemar test of b first-only and c second-only successes over
// units pairs, with the success rates of each side (firstK, secondK successes).
func NewMcNemar(b, c, units, firstK, secondK int) McNemar {
	return newMcNemar(b, c, units, firstK, secondK)
}
