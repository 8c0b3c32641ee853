package cli

import (
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/nriwasm/nriwasm/host/cdi"
	"github.com/nriwasm/nriwasm/host/claimstatus"
	"github.com/nriwasm/nriwasm/host/config"
	"github.com/nriwasm/nriwasm/host/dra"
	"github.com/nriwasm/nriwasm/host/resmgr"
)

// draDriverName is the name the policy's Init gets: empty when the user
// turned DRA off, so the policy offers nothing.
func draDriverName(cfg *config.Config, policy string) string {
	if cfg.DRA.Enabled != nil && !*cfg.DRA.Enabled {
		return ""
	}
	return cfg.DRA.DriverName(policy)
}

// startDRA registers the DRA driver with the manager when DRA is on: dra.enabled
// true, or unset and the policy's configuration asks for devices. Without
// cluster access it warns and leaves DRA off. It returns the driver (nil when
// off) so a live reconfiguration can republish the devices.
func startDRA(cfg *config.Config, policy string, m *resmgr.Manager, log logr.Logger) (*dra.Driver, error) {
	d := &cfg.DRA
	switch {
	case d.Enabled != nil && !*d.Enabled:
		log.Info("DRA off (dra.enabled: false)")
		return nil, nil
	case d.Enabled == nil && !m.WantsDRA():
		log.V(1).Info("DRA off: the policy's configuration asks for no devices and dra.enabled is unset")
		return nil, nil
	}
	driver := d.DriverName(policy)
	log = log.WithValues("driver", driver)
	rc, err := kubeConfig(d.Kubeconfig)
	if err != nil {
		log.Error(err, "WARNING: no cluster access; running with DRA off")
		return nil, nil
	}
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		log.Error(err, "WARNING: no cluster client; running with DRA off")
		return nil, nil
	}
	specs, err := cdi.New(d.CDIDir, driver)
	if err != nil {
		return nil, err
	}
	if err := removeStaleSpecs(specs, m.PreparedClaims(), log); err != nil {
		return nil, err
	}
	status, err := claimstatus.New(client, driver, claimstatus.WithLogger(log.WithName("claimstatus")))
	if err != nil {
		return nil, fmt.Errorf("dra: %w", err)
	}
	dataDir := d.DataDir(driver)
	for _, dir := range []string{dataDir, d.RegistrarDir} {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("dra: %w", err)
		}
	}
	opts := []dra.Option{dra.WithPluginDataDir(dataDir), dra.WithRegistrarDir(d.RegistrarDir), dra.WithStatus(status), dra.WithLogger(log.WithName("dra"))}
	if uid := os.Getenv("POD_UID"); uid != "" {
		opts = append(opts, dra.WithPodUID(types.UID(uid)))
	}
	drv, err := dra.New(m, driver, nodeName(), client, specs, opts...)
	if err != nil {
		return nil, err
	}
	m.Go("claimstatus", status.Run)
	m.Go("dra", drv.Run)
	log.Info("DRA on", "node", nodeName(), "pluginDataDir", dataDir, "cdiDir", d.CDIDir)
	return drv, nil
}

// kubeConfig is the API server's client configuration: the kubeconfig file
// named, else the pod's service account, else $KUBECONFIG.
func kubeConfig(path string) (*rest.Config, error) {
	if path != "" {
		return clientcmd.BuildConfigFromFlags("", path)
	}
	rc, inClusterErr := rest.InClusterConfig()
	if inClusterErr == nil {
		return rc, nil
	}
	if env := os.Getenv("KUBECONFIG"); env != "" {
		return clientcmd.BuildConfigFromFlags("", env)
	}
	return nil, errors.Join(errors.New("dra.kubeconfig and $KUBECONFIG are unset"), inClusterErr)
}

// removeStaleSpecs removes the CDI specs of claims the journal does not hold
// (prepared by an agent whose checkpoint was lost, and unprepared meanwhile).
func removeStaleSpecs(specs *cdi.Writer, prepared []string, log logr.Logger) error {
	uids, err := specs.Claims()
	if err != nil {
		return err
	}
	for _, uid := range uids {
		if slices.Contains(prepared, uid) {
			continue
		}
		log.Info("removing the CDI spec of a claim that is not prepared", "claimUID", uid)
		if err := specs.Remove(uid); err != nil {
			return err
		}
	}
	return nil
}
