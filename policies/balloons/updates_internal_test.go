package balloons

import (
	"fmt"
	"slices"
	"testing"
)

func TestMergeRuns(t *testing.T) {
	for _, tc := range []struct {
		name string
		runs [][]int
	}{
		{"empty", nil},
		{"one run", [][]int{{1, 2, 3}}},
		{"two runs", [][]int{{2, 5, 9}, {1, 3, 4, 10}}},
		{"three runs, odd one out", [][]int{{7, 8}, {1, 9}, {2, 3, 4}}},
		{"runs in order already", [][]int{{1, 2}, {3, 4}}},
		{"five runs", [][]int{{9}, {8}, {7}, {1, 6}, {0, 2, 5}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cs []*container
			var want []string
			for _, run := range tc.runs {
				for _, n := range run {
					id := fmt.Sprintf("c%02d", n)
					cs = append(cs, &container{id: id})
					want = append(want, id)
				}
			}
			slices.Sort(want)
			in := slices.Clone(cs)
			var got []string
			for _, c := range mergeRuns(cs) {
				got = append(got, c.id)
			}
			if !slices.Equal(got, want) {
				t.Errorf("mergeRuns = %v, want %v", got, want)
			}
			if !slices.Equal(cs, in) {
				t.Errorf("mergeRuns changed its input")
			}
		})
	}
}
