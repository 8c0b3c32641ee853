package topology_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/host/topology"
)

func TestParseList(t *testing.T) {
	tests := []struct {
		in      string
		want    []uint32
		wantErr string
	}{
		{in: "", want: nil},
		{in: "\n", want: nil},
		{in: "0", want: []uint32{0}},
		{in: "0-3,8-11\n", want: []uint32{0, 1, 2, 3, 8, 9, 10, 11}},
		{in: "5-5", want: []uint32{5}},
		{in: "7,1-2,2", want: []uint32{1, 2, 7}}, // unsorted and duplicate: sorted, unique
		{in: "4294967295", want: []uint32{4294967295}},
		{in: "4294967294-4294967295", want: []uint32{4294967294, 4294967295}},
		{in: "3-1", wantErr: "reversed range"},
		{in: "abc", wantErr: "bad id"},
		{in: "1,,2", wantErr: "empty element"},
		{in: ",1", wantErr: "empty element"},
		{in: "1,", wantErr: "empty element"},
		{in: "1-", wantErr: "empty element"},
		{in: "-1", wantErr: "empty element"},
		{in: "1-2-3", wantErr: "bad id"},
		{in: "+1", wantErr: "bad id"},
		{in: "1 ,2", wantErr: "bad id"},
		{in: "0-7:2", wantErr: "bad id"},
		{in: "4294967296", wantErr: "out of range"},
		{in: "0-4294967295", wantErr: "more than"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := topology.ParseList(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseList(%q) = %v, %v; want error containing %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("ParseList(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestFormatList(t *testing.T) {
	tests := []struct {
		in   []uint32
		want string
	}{
		{nil, ""},
		{[]uint32{}, ""},
		{[]uint32{0}, "0"},
		{[]uint32{4, 5}, "4-5"},
		{[]uint32{0, 1, 2, 3, 8, 9, 10, 11}, "0-3,8-11"},
		{[]uint32{1, 3, 5}, "1,3,5"},
		{[]uint32{9, 0, 1, 9, 2}, "0-2,9"}, // unsorted and duplicate input
		{[]uint32{4294967294, 4294967295}, "4294967294-4294967295"},
		{[]uint32{0, 4294967295}, "0,4294967295"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			in := slices.Clone(tc.in)
			if got := topology.FormatList(in); got != tc.want {
				t.Errorf("FormatList(%v) = %q, want %q", tc.in, got, tc.want)
			}
			if !slices.Equal(in, tc.in) {
				t.Errorf("FormatList modified its input: %v", in)
			}
		})
	}
}

// TestListRoundTrip checks FormatList(ParseList(s)) == s for canonical
// lists and ParseList(FormatList(ids)) == sorted unique ids for random sets.
func TestListRoundTrip(t *testing.T) {
	for _, s := range []string{"", "0", "0-1", "0-3,8-11", "1,3,5-7,9", "0-4095", "2,4094-4095"} {
		t.Run(s, func(t *testing.T) {
			ids, err := topology.ParseList(s)
			if err != nil {
				t.Fatal(err)
			}
			if got := topology.FormatList(ids); got != s {
				t.Errorf("round trip of %q gave %q", s, got)
			}
		})
	}
	t.Run("random", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for range 500 {
			var ids []uint32
			for range r.IntN(40) {
				ids = append(ids, uint32(r.IntN(64)))
			}
			want := slices.Compact(slices.Sorted(slices.Values(ids)))
			got, err := topology.ParseList(topology.FormatList(ids))
			if err != nil || !slices.Equal(got, want) && len(want) > 0 {
				t.Fatalf("ids %v: ParseList(FormatList) = %v, %v", ids, got, err)
			}
		}
	})
}
