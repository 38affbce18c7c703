package config

// Suggest returns the candidate closest to key when it is close enough to
// be a likely typo, else "" (for "did you mean" hints elsewhere).
func Suggest(key string, candidates []string) string { return suggest(key, candidates) }

// suggest returns the candidate closest to key when it is close enough to be
// a likely typo (edit distance at most 2, or 3 for long keys), else "".
func suggest(key string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		d := editDistance(key, c)
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	limit := 2
	if len(key) > 12 {
		limit = 3
	}
	if bestDist < 0 || bestDist > limit {
		return ""
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (bytes).
func editDistance(a, b string) int {
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
