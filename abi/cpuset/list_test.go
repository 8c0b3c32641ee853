package cpuset_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
)

func TestParseList(t *testing.T) {
	tests := []struct {
		in      string
		want    []uint32
		wantErr string
	}{
		{in: "", want: nil},
		{in: " \n", want: nil},
		{in: "0", want: []uint32{0}},
		{in: "0-3,8-11\n", want: []uint32{0, 1, 2, 3, 8, 9, 10, 11}},
		{in: "5-5", want: []uint32{5}},
		{in: "7,1-2,2", want: []uint32{1, 2, 7}},
		{in: "4294967294-4294967295", want: []uint32{4294967294, 4294967295}},
		{in: "3-1", wantErr: `reversed range "3-1"`},
		{in: "0,abc", wantErr: `bad id "abc"`},
		{in: "1,,2", wantErr: "empty element"},
		{in: "1-", wantErr: "empty element"},
		{in: "-1", wantErr: "empty element"},
		{in: "1-2-3", wantErr: `bad id "2-3"`},
		{in: "+1", wantErr: `bad id "+1"`},
		{in: "0-7:2", wantErr: `bad id "7:2"`},
		{in: "4294967296", wantErr: "out of range"},
		{in: "0-4294967295", wantErr: "more than"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := cpuset.ParseList(tc.in)
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
		{[]uint32{0}, "0"},
		{[]uint32{4, 5}, "4-5"},
		{[]uint32{0, 1, 2, 3, 8, 9, 10, 11}, "0-3,8-11"},
		{[]uint32{1, 3, 5}, "1,3,5"},
		{[]uint32{9, 0, 1, 9, 2}, "0-2,9"},
		{[]uint32{0, 4294967295}, "0,4294967295"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			in := slices.Clone(tc.in)
			if got := cpuset.FormatList(in); got != tc.want {
				t.Errorf("FormatList(%v) = %q, want %q", tc.in, got, tc.want)
			}
			if !slices.Equal(in, tc.in) {
				t.Errorf("FormatList modified its input: %v", in)
			}
		})
	}
}

// TestFormatListAllocatesOnce guards the one buffer: policies format a list
// for every container they update, and in Wasm each allocation costs.
func TestFormatListAllocatesOnce(t *testing.T) {
	ids := make([]uint32, 0, 2048)
	for id := uint32(0); id < 4096; id += 2 {
		ids = append(ids, id) // no two consecutive: the longest form
	}
	var got string
	if n := testing.AllocsPerRun(10, func() { got = cpuset.FormatList(ids) }); n != 1 {
		t.Errorf("FormatList allocated %v times, want 1", n)
	}
	if !strings.HasPrefix(got, "0,2,4,") || !strings.HasSuffix(got, ",4092,4094") {
		t.Errorf("FormatList = %.20q…, want 0,2,4,…,4094", got)
	}
	// The buffer is exactly the list: a short list keeps no long buffer alive.
	all := make([]uint32, 4096)
	for i := range all {
		all[i] = uint32(i)
	}
	if n := testing.AllocsPerRun(10, func() { got = cpuset.FormatList(all) }); n != 1 || got != "0-4095" {
		t.Errorf("FormatList(0…4095) = %q in %v allocations, want \"0-4095\" in 1", got, n)
	}
}

func TestParseID(t *testing.T) {
	tests := []struct {
		in      string
		want    uint32
		wantErr string
	}{
		{in: "0", want: 0},
		{in: "12", want: 12},
		{in: "4294967295", want: 4294967295},
		{in: "", wantErr: "empty element"},
		{in: "1a", wantErr: `bad id "1a"`},
		{in: "-1", wantErr: `bad id "-1"`},
		{in: "4294967296", wantErr: "out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := cpuset.ParseID(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseID(%q) = %d, %v; want error containing %q", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseID(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
			}
		})
	}
}
