package cli

import (
	"strings"
	"testing"
)

// smapsFixture is /proc/PID/smaps for an executable /usr/bin/nriwasm with
// its code, read-only data holding one private copy, and data; a library;
// and an anonymous mapping (fields the parser skips trimmed).
const smapsFixture = `00400000-02000000 r-xp 00000000 fd:00 1234                               /usr/bin/nriwasm
Size:              28672 kB
Rss:               19764 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me dw sd
02000000-04000000 r--p 01c00000 fd:00 1234                               /usr/bin/nriwasm
Size:              32768 kB
Rss:               24000 kB
Anonymous:             8 kB
VmFlags: rd mr mw me dw sd
04000000-04100000 r--p 03c00000 fd:00 1234                               /usr/bin/nriwasm
Size:               1024 kB
Rss:                 512 kB
Anonymous:             0 kB
05000000-05100000 rw-p 04c00000 fd:00 1234                               /usr/bin/nriwasm
Size:               1024 kB
Rss:                1024 kB
Anonymous:           100 kB
06000000-06100000 r--p 00000000 fd:00 99                                 /usr/lib/libc.so.6
Rss:                 200 kB
Anonymous:             0 kB
07000000-07100000 r--p 00000000 fd:00 1234                               /usr/bin/nriwasm
Rss:                   0 kB
Anonymous:             0 kB
7f0000000000-7f0000100000 rw-p 00000000 00:00 0
Rss:                 900 kB
Anonymous:           900 kB
`

func TestReleasableMappings(t *testing.T) {
	got, err := releasable(strings.NewReader(smapsFixture), "/usr/bin/nriwasm")
	if err != nil {
		t.Fatal(err)
	}
	// The code and the clean read-only mapping only: not the one holding a
	// private copy, the writable one, another file's, one with nothing
	// resident or an anonymous one.
	want := []exeMapping{
		{lo: 0x400000, hi: 0x2000000, rss: 19764 << 10},
		{lo: 0x4000000, hi: 0x4100000, rss: 512 << 10},
	}
	if len(got) != len(want) {
		t.Fatalf("releasable = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("mapping %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestReleasableDeletedExecutable(t *testing.T) {
	// An executable replaced on disk while running: smaps and /proc/self/exe
	// both say "(deleted)".
	smaps := "00400000-00500000 r-xp 00000000 fd:00 1234 /usr/bin/nriwasm (deleted)\nRss: 40 kB\nAnonymous: 0 kB\n"
	got, err := releasable(strings.NewReader(smaps), "/usr/bin/nriwasm (deleted)")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].rss != 40<<10 {
		t.Errorf("releasable = %+v, want the one mapping of 40 KiB", got)
	}
}

func TestReleasableBadInput(t *testing.T) {
	for _, c := range []struct{ smaps, want string }{
		{"00500000-00400000 r-xp 00000000 fd:00 1 /x\n", `bad address range "00500000-00400000"`},
		{"0040000g-00500000 r-xp 00000000 fd:00 1 /x\n", `bad address range "0040000g-00500000"`},
		{"00400000-00500000 r-xp 00000000 fd:00 1 /x\nRss: many kB\n", `"Rss: many kB"`},
	} {
		_, err := releasable(strings.NewReader(c.smaps), "/x")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("releasable(%q) = %v, want an error naming %s", c.smaps, err, c.want)
		}
	}
}
