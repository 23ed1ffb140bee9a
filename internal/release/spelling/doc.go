// Package spelling owns ferry's "did you mean": the near miss of a word
// among the words that are known (a release's field names, the client's
// commands and flags). It is pure: no I/O.
package spelling
