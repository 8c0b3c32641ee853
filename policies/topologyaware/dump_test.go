package topologyaware_test

import (
	"context"
	"encoding/json"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// dump mirrors the DumpState document.
type dump struct {
	Available, Isolated, Reserved string
	ReservedMilli                 int64
	Pools                         []struct {
		ID                       int
		Name, CPUs, Mems, Shared string
		Parent                   *int
		Exclusive                []struct{ Container, CPUs string }
	}
	Containers []struct {
		ID, Kind, Pool, CPUs, Mems, Namespace, MemZone string
		MemBytes                                       int64
		SharedMilli                                    int64
		Claims                                         []string
	}
	Claims []struct {
		UID, CPUs string
		Devices   []string
		Foreign   bool
	}
}

func (h *harness) dumpRaw() []byte {
	h.TB.Helper()
	resp, err := h.Client.DumpState(context.Background(), &abi.DumpStateRequest{})
	if err != nil {
		h.TB.Fatalf("DumpState: %v", err)
	}
	return resp.Json
}

func (h *harness) dump() dump {
	h.TB.Helper()
	var d dump
	if err := json.Unmarshal(h.dumpRaw(), &d); err != nil {
		h.TB.Fatalf("DumpState JSON: %v", err)
	}
	return d
}
