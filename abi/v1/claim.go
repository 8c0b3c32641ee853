package v1

// SameResults tells whether two claims name the same allocation results,
// in the same order: a repeated Allocate of a claim must carry the results
// of the first.
func SameResults(a, b *Claim) bool {
	ra, rb := a.GetResults(), b.GetResults()
	if len(ra) != len(rb) {
		return false
	}
	for i := range ra {
		if !ra[i].EqualVT(rb[i]) {
			return false
		}
	}
	return true
}
