package spelling

// maxDistance is the most edits a near miss may be from what was meant.
const maxDistance = 2

// minLength is the shortest word suggestions are made for: shorter ones
// are near every short word.
const minLength = 3

// maxLength bounds the words compared (the edit distance is quadratic):
// longer ones get no suggestion.
const maxLength = 64

// Closest returns the known word nearest to word, at most two edits
// (insertions, deletions, substitutions) away, and true; "" and false when
// word is shorter than three bytes or near none. A word that is known is
// its own closest (distance 0): the caller's lookup differs (case, say).
// Ties go
// to the word that sorts first, so the answer does not depend on the
// order of known.
func Closest(word string, known []string) (string, bool) {
	if len(word) < minLength || len(word) > maxLength {
		return "", false
	}
	best, bestDist := "", maxDistance+1
	for _, k := range known {
		if len(k) > maxLength {
			continue
		}
		if d := distance(word, k); d < bestDist || (d == bestDist && k < best) {
			best, bestDist = k, d
		}
	}
	return best, best != ""
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
