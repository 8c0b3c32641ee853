//go:build !race

package interrupt

// raceSlack is 1 without the race detector: the bound is one countdown.
const raceSlack = 1
