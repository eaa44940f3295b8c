package pluginhost

// VerifyChecksum checks spec's checksum attribute against its files (a *ChecksumError
// when they differ), as Start does before anything runs; for callers that use what a
// plugin reported earlier instead of starting it.
func VerifyChecksum(spec Spec) error { return spec.verifyChecksum() }
