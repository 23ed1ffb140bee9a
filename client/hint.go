package main

import (
	"regexp"
	"strings"
)

// hint is the ferry command line of cmd with args, carrying the deployer
// flags the user gave (--local, --state-machine, --bucket), each word
// shell-quoted: every hint ferry prints pastes as is.
func (f *deployerFlags) hint(cmd string, args ...string) string {
	words := []string{"ferry", cmd}
	if f.local {
		words = append(words, "--local")
	}
	if f.stateMachine != "" {
		words = append(words, "--state-machine", f.stateMachine)
	}
	if f.bucket != "" {
		words = append(words, "--bucket", f.bucket)
	}
	words = append(words, args...)
	for i, w := range words {
		words[i] = shellQuote(w)
	}
	return strings.Join(words, " ")
}

// shellSafe matches the words a POSIX shell reads as they are.
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`)

// shellQuote returns w as a POSIX shell reads it back as one word: as is
// when it has nothing special, else in single quotes.
func shellQuote(w string) string {
	if shellSafe.MatchString(w) {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
