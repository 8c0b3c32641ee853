package cli

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/go-logr/logr"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/host/state"
	"github.com/nriwasm/nriwasm/policies/builtin"
)

// TestStartKeepsTheDigestRunLast: an agent restarted with an OCI tag that
// now names another module starts with the digest its state directory
// records (what it ran last, swapped to live or not); the resolver, which
// Recheck uses, sees the tag's new module, to be swapped to through the
// swap's check. Without a record the tag is loaded as it is.
func TestStartKeepsTheDigestRunLast(t *testing.T) {
	host := startRegistry(t)
	r := "oci://" + host + "/policies/p:stable"
	push := func(policy string) []byte {
		if _, errOut, code := run(t, "policy", "push", policy, r, "--plain-http"); code != 0 {
			t.Fatalf("push %s: %s", policy, errOut)
		}
		m, _ := builtin.Module(policy)
		return m
	}
	dir := t.TempDir()
	cfg := config.Default()
	cfg.Policy.Name, cfg.StateDir = r, dir
	if err := cfg.Complete(dir); err != nil {
		t.Fatal(err)
	}
	cfg.Registry.PlainHTTP = []string{host}
	ctx, log := context.Background(), logr.Discard()

	first := push("conformance")
	p, err := startPolicy(ctx, cfg, log)
	if err != nil || p.Identity.Digest != resmgr.ModuleDigest(first) || p.Identity.Pinned == "" || p.Identity.Reference != r {
		t.Fatalf("first start: %+v, %v", p.Identity, err)
	}
	rec, _ := json.Marshal(p.Identity)
	if err := state.NewCheckpoint(dir).SavePolicy(rec); err != nil {
		t.Fatal(err)
	}
	second := push("topology-aware")
	p, err = startPolicy(ctx, cfg, log)
	if err != nil || p.Identity.Digest != resmgr.ModuleDigest(first) {
		t.Fatalf("restart loaded %q (%v), want the recorded conformance digest", p.Identity.Name, err)
	}
	cand, err := resolver(log)(ctx, cfg)
	if err != nil || cand.Identity.Digest != resmgr.ModuleDigest(second) || cand.Identity.Name != "topology-aware" {
		t.Fatalf("resolver: %+v, %v; want the tag's new module", cand.Identity, err)
	}
	other := *cfg
	other.StateDir = t.TempDir()
	if p, err := startPolicy(ctx, &other, log); err != nil || p.Identity.Digest != resmgr.ModuleDigest(second) {
		t.Fatalf("start without a record loaded %q (%v), want the tag's module", p.Identity.Name, err)
	}
}
