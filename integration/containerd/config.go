//go:build integration

package containerd

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// configTemplate is containerd's config (version 4, as containerd 2.4 writes it):
// everything under the test root, no imports from /etc, the CRI plugin with
// runc (cgroupfs) and the busybox image as pause image, NRI on its own socket
// with external plugin connections and the default timeouts, and no
// pre-installed NRI plugins.
const configTemplate = `version = 4
root = {{root}}
state = {{state}}
temp = {{temp}}
imports = []

[debug]
  level = {{loglevel}}

[plugins]
  [plugins.'io.containerd.server.v1.grpc']
    address = {{address}}

  [plugins.'io.containerd.server.v1.ttrpc']
    address = {{ttrpc}}

  [plugins.'io.containerd.cri.v1.images']
    snapshotter = 'overlayfs'
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = {{image}}

  [plugins.'io.containerd.cri.v1.runtime']
    restrict_oom_score_adj = true
    cdi_spec_dirs = {{cdidirs}}
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = 'runc'
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = 'io.containerd.runc.v2'
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = {{runc}}
          Root = {{runcroot}}
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = []
      conf_dir = {{cniconf}}

  [plugins.'io.containerd.grpc.v1.cri']
    disable_tcp_service = true
    stream_server_address = '127.0.0.1'
    stream_server_port = '0'

  [plugins.'io.containerd.nri.v1.nri']
    disable = false
    socket_path = {{nrisocket}}
    plugin_path = {{nriplugins}}
    plugin_config_path = {{nriconf}}
    disable_connections = false

  [plugins.'io.containerd.shim.v1.manager']
    socket_dir = {{shimsockets}}

  [plugins.'io.containerd.internal.v1.opt']
    path = {{opt}}
`

// writeConfig renders the config for c to path.
func (c *Containerd) writeConfig(path string) error {
	if len(c.shimSocketDir()) > maxShimSocketDir {
		return fmt.Errorf("shim socket_dir %q is longer than %d characters", c.shimSocketDir(), maxShimSocketDir)
	}
	vars := map[string]string{
		"root":        c.path("root"),
		"state":       c.path("state"),
		"temp":        c.path("tmp"),
		"address":     c.Address,
		"ttrpc":       c.Address + ".ttrpc",
		"loglevel":    c.opts.LogLevel,
		"image":       ImageRef,
		"runc":        c.bin.runc,
		"runcroot":    c.path("runc"),
		"cniconf":     c.path("cni"),
		"nrisocket":   c.NRISocket,
		"nriplugins":  c.path("nri", "plugins"),
		"nriconf":     c.path("nri", "conf.d"),
		"shimsockets": c.shimSocketDir(),
		"opt":         c.path("opt"),
	}
	cfg := configTemplate
	for k, v := range vars {
		cfg = strings.ReplaceAll(cfg, "{{"+k+"}}", strconv.Quote(v))
	}
	dirs := make([]string, len(c.opts.CDISpecDirs))
	for i, d := range c.opts.CDISpecDirs {
		dirs[i] = strconv.Quote(d)
	}
	cfg = strings.ReplaceAll(cfg, "{{cdidirs}}", "["+strings.Join(dirs, ", ")+"]")
	if i := strings.Index(cfg, "{{"); i >= 0 {
		return fmt.Errorf("containerd config: unexpanded variable at %q", cfg[i:min(len(cfg), i+20)])
	}
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return fmt.Errorf("writing the containerd config: %w", err)
	}
	return nil
}
