package synth

// Phonemes come from Debian's espeak-ng, run as a process (never linked): one process
// per clause, text on standard input, IPA on standard output. Clauses are split here at
// the punctuation piper-phonemize and phonemizer keep (, . ? ! : ;), because the espeak-ng
// command line prints a clause's phonemes without its punctuation.

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"unicode"
)

// clause is one piece of text between clause punctuation.
type clause struct {
	text        string
	punct       rune   // , . ? ! : ; or 0 (an ellipsis, or the end of the text without punctuation)
	mark        string // the punctuation as written ("?!", "...")
	sentenceEnd bool   // . ? ! or the end of the text
}

// splitClauses cuts text after a run of clause punctuation that is followed by a space
// or the end of the text (so "3.30" and "e.g." inside a word stay whole). The run's
// first mark is the clause's punctuation, except an ellipsis, which espeak-ng ends a
// clause with but piper-phonemize gives no mark and no sentence end.
func splitClauses(text string) []clause {
	rs := []rune(strings.Join(strings.Fields(text), " "))
	var out []clause
	start := 0
	for i := 0; i < len(rs); i++ {
		if !isClausePunct(rs[i]) {
			continue
		}
		j := i
		for j < len(rs) && isClausePunct(rs[j]) {
			j++
		}
		if j < len(rs) && !unicode.IsSpace(rs[j]) {
			i = j - 1
			continue
		}
		c := clause{text: strings.TrimSpace(string(rs[start:i])), punct: rs[i], mark: string(rs[i:j])}
		if strings.HasPrefix(c.mark, "..") {
			c.punct = 0
		}
		c.sentenceEnd = c.punct == '.' || c.punct == '?' || c.punct == '!'
		if c.text != "" {
			out = append(out, c)
		} else if len(out) > 0 { // punctuation alone ("Wait ... no"): keep the first mark
			out[len(out)-1].sentenceEnd = out[len(out)-1].sentenceEnd || c.sentenceEnd
		}
		start, i = j, j-1
	}
	if rest := strings.TrimSpace(string(rs[start:])); rest != "" {
		out = append(out, clause{text: rest, sentenceEnd: true})
	}
	if len(out) > 0 {
		out[len(out)-1].sentenceEnd = true
	}
	return out
}

func isClausePunct(r rune) bool {
	switch r {
	case ',', '.', '?', '!', ':', ';':
		return true
	}
	return false
}

// espeak runs espeak-ng on one clause and returns its IPA, the lines espeak-ng prints
// (one per clause it finds) joined by a space. tie, when not 0, joins the letters of a
// multi-letter phoneme with it (misaki's "^", for Kokoro).
func espeak(ctx context.Context, binary, voice, text string, tie rune) (string, error) {
	args := []string{"-q", "--ipa", "-v", voice}
	if tie != 0 {
		args = append(args, "--tie="+string(tie))
	}
	args = append(args, "--stdin")
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Stdin = strings.NewReader(text)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("espeak-ng -v %s: %v: %s", voice, err, strings.TrimSpace(stderr.String()))
	}
	var parts []string
	for _, line := range strings.Split(stdout.String(), "\n") {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, " "), nil
}
