package resmgr_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/metrics"
	"github.com/nriwasm/nriwasm/host/resmgr"
	"github.com/nriwasm/nriwasm/policies/topologyaware"
	"github.com/nriwasm/nriwasm/sdk/go/policy"
)

// TestConcurrentStress drives one Manager from several goroutines at once,
// as the agent does: NRI events (containers created, updated, stopped and
// removed in four pods), DRA claims prepared and unprepared, the
// configuration reapplied, and the pools, the snapshot and the metrics read
// (a scrape). Under the race detector (make race) it is the test of the
// agent's locks; either way the end state must be empty: every container
// and claim gone from the journal, and from the policy's pools.
func TestConcurrentStress(t *testing.T) {
	const workers, rounds, claims = 4, 25, 25
	f := newFake(nil)
	f.newPol = func() policy.Policy { return topologyaware.New() }
	cfg := config.Default()
	cfg.Policy.Name = "topology-aware"
	cfg.Policy.Data = []byte("dra:\n  enabled: true\n")
	cfg.StateDir = t.TempDir()
	met := metrics.New()
	m, err := resmgr.New(context.Background(), cfg, testTopology(), f.load, resmgr.WithNodeName("node-1"), resmgr.WithDriverName(driver), resmgr.WithMetrics(met))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Stop() })
	ctx := context.Background()
	if _, err := m.Synchronize(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}

	var wg sync.WaitGroup
	errs := make(chan error, workers+3)
	done := make(chan struct{})
	run := func(name string, f func() error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(); err != nil {
				errs <- fmt.Errorf("%s: %w", name, err)
			}
		}()
	}
	// The events start once the reconfigurations and the scrapes have each run
	// once, so that they run beside the events however fast those are.
	var events, looping sync.WaitGroup
	looping.Add(2)
	for w := range workers {
		events.Add(1)
		run(fmt.Sprintf("nri %d", w), func() error {
			defer events.Done()
			looping.Wait()
			pod := &abi.PodSandbox{Id: fmt.Sprintf("pod-%d", w), Name: fmt.Sprintf("pod-%d", w), Namespace: "ns", Uid: fmt.Sprintf("uid-%d", w)}
			if _, err := m.RunPodSandbox(ctx, pod); err != nil {
				return err
			}
			for i := range rounds {
				c := &abi.Container{Id: fmt.Sprintf("c-%d-%d", w, i), PodSandboxId: pod.Id, Name: fmt.Sprintf("c%d", i),
					QosClass: abi.QOSClass_QOS_CLASS_BURSTABLE, Resources: &abi.Resources{CpuRequestMilli: 200, CpuLimitMilli: 1000}}
				if _, _, err := m.CreateContainer(ctx, pod, c); err != nil {
					return fmt.Errorf("create %s: %w", c.Id, err)
				}
				if _, err := m.UpdateContainer(ctx, pod, c, &abi.Resources{CpuRequestMilli: 300, CpuLimitMilli: 1000}); err != nil {
					return fmt.Errorf("update %s: %w", c.Id, err)
				}
				if _, err := m.StopContainer(ctx, pod, c); err != nil {
					return fmt.Errorf("stop %s: %w", c.Id, err)
				}
				if _, err := m.RemoveContainer(ctx, pod, c); err != nil {
					return fmt.Errorf("remove %s: %w", c.Id, err)
				}
			}
			if _, err := m.StopPodSandbox(ctx, pod); err != nil {
				return err
			}
			_, err := m.RemovePodSandbox(ctx, pod)
			return err
		})
	}
	run("dra", func() error {
		for i := range claims {
			uid := fmt.Sprintf("claim-%d", i)
			claim := cpuClaim(uid, fmt.Sprintf("cpudevnuma00%d", i%2), "1")
			if _, err := m.PrepareClaim(ctx, claim, func(*abi.AllocateResponse) error { return nil }); err != nil {
				return fmt.Errorf("prepare %s: %w", uid, err)
			}
			if err := m.UnprepareClaim(ctx, uid, func() error { return nil }); err != nil {
				return fmt.Errorf("unprepare %s: %w", uid, err)
			}
		}
		return nil
	})
	var reconfigs, scrapes int
	run("reconfigure", func() error {
		for i := 0; ; i++ {
			select {
			case <-done:
				reconfigs = i
				return nil
			default:
			}
			next := *m.Config()
			next.Policy.Data = []byte("dra:\n  enabled: true\n")
			if i%2 == 1 {
				next.Policy.Data = []byte("dra:\n  enabled: true\npinMemory: false\n")
			}
			err := m.ApplyConfig(ctx, &next, nil)
			if i == 0 {
				looping.Done()
			}
			if err != nil {
				return err
			}
		}
	})
	run("scrape", func() error {
		for i := 0; ; i++ {
			select {
			case <-done:
				scrapes = i
				return nil
			default:
			}
			_, gatherErr := met.Registry.Gather()
			_, poolsErr := m.Pools(ctx)
			m.Snapshot()
			if i == 0 {
				looping.Done()
			}
			if err := errors.Join(gatherErr, poolsErr); err != nil {
				return err
			}
		}
	})
	go func() {
		events.Wait()
		close(done)
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if reconfigs == 0 || scrapes == 0 {
		t.Errorf("%d reconfigurations and %d scrapes ran beside the events; want some of each", reconfigs, scrapes)
	}
	t.Logf("%d reconfigurations and %d scrapes beside %d container lifecycles and %d claims", reconfigs, scrapes, workers*rounds, claims)

	j := m.Journal()
	if len(j.GetContainers()) != 0 || len(j.GetPods()) != 0 || len(j.GetClaims()) != 0 {
		t.Errorf("journal after the stress: %d pods, %d containers, %d claims; want none", len(j.GetPods()), len(j.GetContainers()), len(j.GetClaims()))
	}
	if left := m.PreparedClaims(); len(left) != 0 {
		t.Errorf("claims still prepared: %v", left)
	}
	pools, err := m.Pools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pools {
		if len(p.Containers) != 0 {
			t.Errorf("pool %s still holds %v", p.Name, p.Containers)
		}
	}
}
