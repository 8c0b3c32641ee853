package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/fleet"
	"github.com/nriwasm/nriwasm/host/fleet/v1alpha1"
	"github.com/nriwasm/nriwasm/host/resmgr"
)

// fleetStartTimeout bounds the start's one read of the node and the
// PolicyConfig objects; past it, the file's policy starts.
const fleetStartTimeout = 30 * time.Second

// fleetClients is the cluster access of fleet mode (fleet.enabled).
type fleetClients struct {
	client  kubernetes.Interface
	dynamic dynamic.Interface
	node    string
	// started is the object the configuration started from, if any.
	started *v1alpha1.PolicyConfig
	// startErr is why started's policy did not start (fallBack).
	startErr error
}

// startFleet prepares fleet mode when fleet.enabled: it connects, checks
// that the API server serves PolicyConfig and puts the policy of the object
// selecting this node into cfg. It returns nil, after one log line saying
// why, when the file's policy is to run instead: no cluster access, no CRD.
func startFleet(ctx context.Context, cfg *config.Config, log logr.Logger) *fleetClients {
	if !cfg.Fleet.Enabled {
		return nil
	}
	rc, err := kubeConfig(cfg.DRA.Kubeconfig)
	if err != nil {
		log.Error(err, "fleet: no cluster access; the policy comes from the local file")
		return nil
	}
	f := &fleetClients{node: nodeName()}
	if f.client, err = kubernetes.NewForConfig(rc); err == nil {
		f.dynamic, err = dynamic.NewForConfig(rc)
	}
	if err != nil {
		log.Error(err, "fleet: no cluster client; the policy comes from the local file")
		return nil
	}
	served, err := fleet.Served(f.client.Discovery())
	if err == nil && !served {
		err = errors.New("the API server does not serve policyconfigs.nriwasm.io/v1alpha1 (is the CRD installed?)")
	}
	if err != nil {
		log.Error(err, "fleet: off; the policy comes from the local file")
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, fleetStartTimeout)
	defer cancel()
	sel, err := fleet.Initial(ctx, f.client, f.dynamic, f.node)
	switch {
	case err != nil:
		log.Error(err, "fleet: starting with the local file's policy; the PolicyConfigs apply once readable")
	case sel.Chosen != nil:
		fleet.Overlay(cfg, sel.Chosen.Spec.Policy, sel.Chosen.Spec.Config)
		f.started = sel.Chosen
		log.Info("fleet: starting with a PolicyConfig", "policyConfig", sel.Chosen.Name, "generation", sel.Chosen.Generation, "policy", sel.Chosen.Spec.Policy)
	case len(sel.Conflict) > 0:
		log.Error(errors.New(fleet.ConflictMessage(f.node, sel.Conflict)), "fleet: starting with the local file's policy")
	default:
		log.Info("fleet: no PolicyConfig selects this node; starting with the local file's policy", "node", f.node)
	}
	return f
}

// agent returns the fleet agent of a running manager (fleet.ManagerApplier),
// which calls applied after a configuration applied.
func (f *fleetClients) agent(m *resmgr.Manager, applied func(), log logr.Logger) (*fleet.Agent, error) {
	opts := []fleet.Option{fleet.WithRunning(fleet.Running(m)), fleet.WithLogger(log)}
	if f.started != nil {
		opts = append(opts, fleet.WithStarted(f.started, f.startErr))
	}
	return fleet.New(f.client, f.dynamic, f.node, fleet.ManagerApplier(m, applied), opts...)
}

// fallBack puts the file's policy back into cfg when the start with a
// PolicyConfig's policy failed (err), so the agent starts with the file's
// and reports the object's error in its status: true if it did, false if
// there was no PolicyConfig policy to fall back from (f may be nil).
func (f *fleetClients) fallBack(cfg *config.Config, file config.Policy, err error, log logr.Logger) bool {
	if f == nil || f.started == nil || f.startErr != nil {
		return false
	}
	log.Error(err, "fleet: the PolicyConfig's policy did not start; starting with the local file's", "policyConfig", f.started.Name)
	cfg.Policy = file
	f.startErr = fmt.Errorf("start: %w", err)
	return true
}
