package dra

import (
	"errors"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
)

// DefaultHealthInterval is how often every device's health is re-sent to
// kubelet, which treats a device as unknown after 30 s without a report.
const DefaultHealthInterval = 10 * time.Second

// Option configures New; a bad value is New's error, naming the option (the
// host's one options style: host/RATIONALE.md).
type Option func(*options) error

type options struct {
	pluginDataDir  string // "": kubelet's, set by New from the driver name
	registrarDir   string
	status         StatusWriter
	podUID         types.UID
	healthInterval time.Duration
	logger         logr.Logger
}

func defaultOptions() options {
	return options{
		registrarDir:   kubeletplugin.KubeletRegistryDir,
		healthInterval: DefaultHealthInterval,
		logger:         logr.Discard(),
	}
}

// WithPluginDataDir sets the directory of the plugin's socket; default
// kubelet's, "/var/lib/kubelet/plugins/<driver name>". It must not be
// empty.
func WithPluginDataDir(dir string) Option {
	return func(o *options) error {
		if dir == "" {
			return errors.New("dra: plugin data directory: empty")
		}
		o.pluginDataDir = dir
		return nil
	}
}

// WithRegistrarDir sets kubelet's plugin registration directory; default
// kubelet's, "/var/lib/kubelet/plugins_registry". It must not be empty.
func WithRegistrarDir(dir string) Option {
	return func(o *options) error {
		if dir == "" {
			return errors.New("dra: registrar directory: empty")
		}
		o.registrarDir = dir
		return nil
	}
}

// WithStatus hands each prepared device's status to w
// (host/claimstatus.Writer); default: no status is written.
func WithStatus(w StatusWriter) Option {
	return func(o *options) error {
		if w == nil {
			return errors.New("dra: status writer: nil")
		}
		o.status = w
		return nil
	}
}

// WithPodUID names the agent's own pod and turns on kubelet's rolling update:
// per-pod sockets, so an upgrade never leaves the node unregistered. Default:
// off. The UID must not be empty.
func WithPodUID(uid types.UID) Option {
	return func(o *options) error {
		if uid == "" {
			return errors.New("dra: pod UID: empty")
		}
		o.podUID = uid
		return nil
	}
}

// WithHealthInterval sets how often every device's health is re-sent to
// kubelet; default DefaultHealthInterval. It must be positive and under
// kubelet's 30 s, after which kubelet takes a device's health as unknown.
func WithHealthInterval(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 || d >= 30*time.Second {
			return fmt.Errorf("dra: health interval %v: must be positive and under 30s", d)
		}
		o.healthInterval = d
		return nil
	}
}

// WithLogger sets the plugin's logger; default: discard.
func WithLogger(l logr.Logger) Option {
	return func(o *options) error {
		if l.GetSink() == nil {
			l = logr.Discard()
		}
		o.logger = l
		return nil
	}
}
