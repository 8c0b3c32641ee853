package state

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"

	"github.com/nriwasm/nriwasm/internal/testkit"
)

// logV1 is a version-1 decision log, written by the last build before version
// 2 (main 5a2d4b1): goldenJournal in one record, then a record of the
// grouped update and the removal logV1Changes makes, each member of the group
// as its whole record. This build cannot write it again; it must keep reading
// it.
//
//go:embed testdata/log-v1.golden
var logV1 []byte

// logV1Changes makes to j the changes of logV1's second record.
func logV1Changes(j *Journal) {
	j.ApplyUpdate(&abi.ContainerUpdate{ContainerId: "ctr-0000", AlsoContainerIds: []string{"ctr-0001", "ctr-0003"}, CpusetCpus: "32-63", CpusetMems: "1"})
	j.RemoveContainer("ctr-0002")
}

// TestLogVersion1 reads a log an older build left behind: a restart after an
// upgrade replays it; the first append raises its header to this version, and
// the log then replays its old records and the new one.
func TestLogVersion1(t *testing.T) {
	testkit.Equal(t, string(logV1[:logHeaderSize]), "NRIWLOG\x00\x00\x00\x00\x01")
	want := goldenJournal()
	logV1Changes(want)

	dir := t.TempDir()
	ck := NewCheckpoint(dir)
	if err := os.WriteFile(ck.LogPath(), logV1, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := ck.Load()
	if err != nil {
		t.Fatal(err)
	}
	testkit.EqualProto(t, got.RestoreState(), want.RestoreState())

	for _, j := range []*Journal{got, want} {
		j.ClearDelta()
		j.ApplyUpdate(&abi.ContainerUpdate{ContainerId: "ctr-0001", AlsoContainerIds: []string{"ctr-0003"}, CpusetCpus: "64-95"})
	}
	appendDelta(t, ck, got)
	data, err := os.ReadFile(ck.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	testkit.Equal(t, string(data[:logHeaderSize]), "NRIWLOG\x00\x00\x00\x00\x02")
	if !bytes.Equal(data[logHeaderSize:len(logV1)], logV1[logHeaderSize:]) {
		t.Fatal("the version-1 records changed when the header was raised")
	}
	again, err := NewCheckpoint(dir).Load()
	if err != nil {
		t.Fatal(err)
	}
	testkit.EqualProto(t, again.RestoreState(), want.RestoreState())
}

// TestGroupJournaledOnce: a grouped update of 200 containers is one entry of
// its record, not 200 whole records, and replaying that record over the
// checkpoint written before it restores every member.
func TestGroupJournaledOnce(t *testing.T) {
	dir := t.TempDir()
	ck := NewCheckpoint(dir)
	j := journal(10, 200, 0)
	if err := ck.Save(j); err != nil {
		t.Fatal(err)
	}
	j.ClearDelta()
	g := &abi.ContainerUpdate{ContainerId: container(0).GetId(), CpusetCpus: "0-63", CpusetMems: "0,1", RdtClass: "gold"}
	for i := 1; i < 200; i++ {
		g.AlsoContainerIds = append(g.AlsoContainerIds, container(i).GetId())
	}
	if !j.ApplyUpdate(g) {
		t.Fatal("ApplyUpdate: a member is not journaled")
	}
	rec, err := j.AppendDelta(nil)
	if err != nil {
		t.Fatal(err)
	}
	if idBytes := 200 * len(container(0).GetId()); len(rec) > idBytes+200*2+100 {
		t.Fatalf("record of a 200-member group: %d bytes, want at most the ids (%d bytes) and their framing", len(rec), idBytes)
	}
	if err := ck.Append(rec); err != nil {
		t.Fatal(err)
	}
	got, err := NewCheckpoint(dir).Load()
	if err != nil {
		t.Fatal(err)
	}
	testkit.EqualProto(t, got.RestoreState(), j.RestoreState())
	for i := range 200 {
		c, _ := got.Container(container(i).GetId())
		if a := c.GetAssignment(); a.GetCpusetCpus() != "0-63" || a.GetCpusetMems() != "0,1" || a.GetRdtClass() != "gold" {
			t.Fatalf("member %d restored with %v", i, a)
		}
	}
}

// TestGroupReplayOrder: in one record, a group's member that the call also
// re-creates, removes or updates alone ends as the call left it; and the log
// replays to the same journal over a checkpoint written after its records
// (a crash between a full save and its trim).
func TestGroupReplayOrder(t *testing.T) {
	dir := t.TempDir()
	ck := NewCheckpoint(dir)
	j := journal(2, 6, 0)
	if err := ck.Save(j); err != nil {
		t.Fatal(err)
	}
	j.ClearDelta()
	id := func(i int) string { return container(i).GetId() }
	j.AddContainer(container(6), adjustment(6))
	j.ApplyUpdate(&abi.ContainerUpdate{ContainerId: id(0), AlsoContainerIds: []string{id(1), id(2), id(3), id(6), "ctr-gone"}, CpusetCpus: "10-19", RdtClass: "gold"})
	j.AddContainer(container(1), adjustment(1)) // re-created after the group
	j.RemoveContainer(id(2))
	j.ApplyUpdate(&abi.ContainerUpdate{ContainerId: id(3), CpusetCpus: "20-29"})
	j.ApplyUpdate(&abi.ContainerUpdate{ContainerId: id(3), AlsoContainerIds: []string{id(4)}, CpusetMems: "1"})
	appendDelta(t, ck, j)
	j.ApplyUpdate(&abi.ContainerUpdate{ContainerId: id(0), AlsoContainerIds: []string{id(5)}, CpusetCpus: "30-39"})
	j.RemoveContainer(id(4))
	appendDelta(t, ck, j)

	got, err := NewCheckpoint(dir).Load()
	if err != nil {
		t.Fatal(err)
	}
	testkit.EqualProto(t, got.RestoreState(), j.RestoreState())
	c1, _ := got.Container(id(1))
	testkit.Equal(t, c1.GetAssignment().GetCpusetCpus(), adjustment(1).GetCpusetCpus())
	c3, _ := got.Container(id(3))
	testkit.Equal(t, fmt.Sprint(c3.GetAssignment().GetCpusetCpus(), " ", c3.GetAssignment().GetCpusetMems()), "20-29 1")

	// A full save of the last journal, then a crash before TrimLog.
	data, err := os.ReadFile(ck.LogPath())
	if err != nil {
		t.Fatal(err)
	}
	if err := ck.Save(j); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ck.LogPath(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	got, err = NewCheckpoint(dir).Load()
	if err != nil {
		t.Fatal(err)
	}
	testkit.EqualProto(t, got.RestoreState(), j.RestoreState())
}

// TestGroupsFold: grouped updates kept with no record in between never name
// more than foldFactor members per container; past that they become whole
// records, and the record still replays to the journal.
func TestGroupsFold(t *testing.T) {
	base := journal(1, 50, 0)
	base.ClearDelta()
	j := FromRestoreState(base.RestoreState())
	g := &abi.ContainerUpdate{ContainerId: container(0).GetId()}
	for i := 1; i < 50; i++ {
		g.AlsoContainerIds = append(g.AlsoContainerIds, container(i).GetId())
	}
	for i := range 3 * foldFactor {
		g.CpusetCpus = fmt.Sprintf("%d", i)
		j.ApplyUpdate(g)
		if j.groups.members > foldFactor*50 {
			t.Fatalf("after %d groups: %d members kept, more than %d", i+1, j.groups.members, foldFactor*50)
		}
	}
	deltaReplaysTo(t, base, j)
}

// TestReconcileDropsGroups: Reconcile marks every container, so the grouped
// updates kept before it add nothing to the next record, which still replays
// to the journal.
func TestReconcileDropsGroups(t *testing.T) {
	base := journal(1, 3, 0)
	base.ClearDelta()
	j := FromRestoreState(base.RestoreState())
	j.ApplyUpdate(&abi.ContainerUpdate{ContainerId: container(0).GetId(), AlsoContainerIds: []string{container(1).GetId(), container(2).GetId()}, CpusetCpus: "7"})
	j.Reconcile([]*abi.PodSandbox{pod(0)}, []*abi.Container{container(0), container(1)})
	testkit.Equal(t, len(j.groups.list), 0)
	deltaReplaysTo(t, base, j)
}

// deltaReplaysTo checks that j's delta, appended as one log record and
// replayed over base, gives j.
func deltaReplaysTo(t *testing.T, base, j *Journal) {
	t.Helper()
	rec, err := j.AppendDelta(logHeader())
	if err != nil {
		t.Fatal(err)
	}
	replayed := FromRestoreState(base.RestoreState())
	if _, err := ReplayLog(replayed, rec); err != nil {
		t.Fatal(err)
	}
	testkit.EqualProto(t, replayed.RestoreState(), j.RestoreState())
}
