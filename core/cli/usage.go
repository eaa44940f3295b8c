package cli

import "strings"

// isCobraUsageError recognises cobra's own command-line errors (unknown command or flag),
// which it returns as plain errors.
func isCobraUsageError(err error) bool {
	msg := err.Error()
	for _, prefix := range []string{"unknown command", "unknown flag", "unknown shorthand flag", "flag needs an argument", "invalid argument", "accepts ", "requires at least", "requires at most"} {
		if strings.HasPrefix(msg, prefix) {
			return true
		}
	}
	return false
}
