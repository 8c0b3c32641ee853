//go:build integration

package kubeapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Server is a private etcd and kube-apiserver started by Start or New.
type Server struct {
	// Dir holds everything: etcd's data, certificates, keys, logs.
	Dir string
	// URL is the API server's address, https://127.0.0.1:<port>.
	URL string
	// ReadyAfter is how long the first start took, from launching etcd to
	// the API server's /readyz answering 200.
	ReadyAfter time.Duration
	// APIServerLog and EtcdLog are the processes' logs (every start appended).
	APIServerLog, EtcdLog string

	bin       binaries
	pki       *pki
	etcdURL   string
	port      int
	etcd      *Process
	apiserver *Process
	admin     *rest.Config
	client    *kubernetes.Clientset

	mu      sync.Mutex
	drivers map[string]*driverSetup // by driver name
	seq     int                     // for unique names
}

// startTimeout bounds each start of etcd or the API server until ready.
const startTimeout = 90 * time.Second

// Start starts etcd and kube-apiserver under a new temporary directory and
// waits until the API server is ready. The test's cleanup stops both and
// removes the directory; if the test failed it logs the tail of the API
// server's log first. A missing binary fails the test; it never skips.
//
// Starting takes seconds: prefer one server per test package (Main and
// Shared) where the tests can share it.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := New()
	if s != nil {
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("kube-apiserver log (%s), last 32 KiB:\n%s", s.APIServerLog, Tail(s.APIServerLog, 32<<10))
			}
			if err := s.Close(); err != nil {
				t.Errorf("kube-apiserver teardown: %v", err)
			}
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// New is Start without a test: the caller must Close the server, also when
// New fails but returned one.
func New() (*Server, error) {
	bin, err := findBinaries()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "nriwasm-kubeapi-")
	if err != nil {
		return nil, fmt.Errorf("creating the server directory: %w", err)
	}
	s := &Server{
		Dir:          dir,
		APIServerLog: filepath.Join(dir, "kube-apiserver.log"),
		EtcdLog:      filepath.Join(dir, "etcd.log"),
		bin:          bin,
		drivers:      map[string]*driverSetup{},
	}
	start := time.Now()
	if s.pki, err = newPKI(dir); err != nil {
		return s, err
	}
	ports, err := FreePorts(3)
	if err != nil {
		return s, err
	}
	s.port = ports[2]
	s.URL = "https://" + hostPort(s.port)
	s.admin = &rest.Config{
		Host: s.URL,
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   s.pki.caPEM,
			CertData: s.pki.adminCert,
			KeyData:  s.pki.adminKey,
		},
		QPS:   -1, // no client-side throttling: the tests measure the server
		Burst: -1,
	}
	if s.client, err = kubernetes.NewForConfig(s.admin); err != nil {
		return s, fmt.Errorf("admin client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := s.startEtcd(ctx, ports[0], ports[1]); err != nil {
		return s, err
	}
	if err := s.startAPIServer(ctx); err != nil {
		return s, err
	}
	s.ReadyAfter = time.Since(start)
	return s, nil
}

// Close stops the API server and etcd and removes Dir. It keeps Dir, and
// says so, when a process would not stop.
func (s *Server) Close() error {
	err := errors.Join(s.apiserver.Stop(20*time.Second), s.etcd.Stop(10*time.Second))
	if err != nil {
		return fmt.Errorf("%w (kept %s)", err, s.Dir)
	}
	if err := os.RemoveAll(s.Dir); err != nil {
		return fmt.Errorf("removing %s: %w", s.Dir, err)
	}
	return nil
}

// Config returns a copy of the admin's configuration: a client certificate
// in group system:masters.
func (s *Server) Config() *rest.Config { return rest.CopyConfig(s.admin) }

// Client is a clientset authenticated as the admin.
func (s *Server) Client() kubernetes.Interface { return s.client }

// StopAPIServer stops the API server (SIGTERM); etcd keeps running, so
// StartAPIServer brings the same cluster back on the same address.
func (s *Server) StopAPIServer(t testing.TB) {
	t.Helper()
	if err := s.apiserver.Stop(20 * time.Second); err != nil {
		t.Fatal(err)
	}
}

// StartAPIServer starts the API server again after StopAPIServer, on the
// same address, etcd, certificates and keys (tokens issued before stay
// valid), and waits until it is ready.
func (s *Server) StartAPIServer(t testing.TB) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := s.startAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
}

func (s *Server) startEtcd(ctx context.Context, clientPort, peerPort int) error {
	s.etcdURL = "http://" + hostPort(clientPort)
	peer := "http://" + hostPort(peerPort)
	var err error
	s.etcd, err = StartProcess("etcd", s.EtcdLog, s.bin.etcd,
		"--name=nriwasm",
		"--data-dir="+filepath.Join(s.Dir, "etcd"),
		"--listen-client-urls="+s.etcdURL,
		"--advertise-client-urls="+s.etcdURL,
		"--listen-peer-urls="+peer,
		"--initial-advertise-peer-urls="+peer,
		"--initial-cluster=nriwasm="+peer,
		"--unsafe-no-fsync", // a test cluster: speed over durability
		"--log-level=warn",
	)
	if err != nil {
		return err
	}
	return s.waitFor(ctx, s.etcd, s.EtcdLog, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.etcdURL+"/health", nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("etcd /health: %s", resp.Status)
		}
		return nil
	})
}

func (s *Server) startAPIServer(ctx context.Context) error {
	if s.apiserver != nil && !s.apiserver.Exited() {
		return errors.New("starting kube-apiserver: already running")
	}
	var err error
	s.apiserver, err = StartProcess("kube-apiserver", s.APIServerLog, s.bin.apiserver,
		"--etcd-servers="+s.etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port="+strconv.Itoa(s.port),
		"--cert-dir="+filepath.Join(s.Dir, "apiserver-certs"),
		"--tls-cert-file="+s.pki.serveCert,
		"--tls-private-key-file="+s.pki.serveKey,
		"--client-ca-file="+s.pki.clientCAFile,
		"--service-account-issuer="+s.pki.serviceAccountIssuerID,
		"--service-account-key-file="+s.pki.saPublic,
		"--service-account-signing-key-file="+s.pki.saPrivate,
		"--authorization-mode=Node,RBAC",
		"--endpoint-reconciler-type=none",
		"--allow-privileged=true",
		"--service-cluster-ip-range=10.96.0.0/16",
		"--profiling=false",
	)
	if err != nil {
		return err
	}
	return s.waitFor(ctx, s.apiserver, s.APIServerLog, func(ctx context.Context) error {
		body, err := s.client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			return fmt.Errorf("/readyz: %w: %s", err, body)
		}
		return nil
	})
}

// waitFor polls ready every 50 ms until it succeeds, p exits or ctx ends.
func (s *Server) waitFor(ctx context.Context, p *Process, log string, ready func(context.Context) error) error {
	var last error
	for {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		last = ready(rctx)
		cancel()
		if last == nil {
			return nil
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited (%v) before it was ready; its log:\n%s", p.name, p.err, Tail(log, 8<<10))
		case <-ctx.Done():
			return fmt.Errorf("%s not ready: %w (last: %v); its log:\n%s", p.name, ctx.Err(), last, Tail(log, 8<<10))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Port is the API server's port on 127.0.0.1.
func (s *Server) Port() int { return s.port }

// CAFile is the cluster CA's certificate (PEM): it signs the API server's
// serving certificate and the client certificates.
func (s *Server) CAFile() string { return s.pki.caFile }

// ServiceAccountKeyFile is the private key service-account tokens are
// signed with (PKCS#8 PEM), for a controller manager's
// --service-account-private-key-file.
func (s *Server) ServiceAccountKeyFile() string { return s.pki.saPrivate }

// WriteKubeconfig writes a kubeconfig for the admin (Config) to path, for
// programs that take one: helm, kubelet, scheduler, controller manager.
func (s *Server) WriteKubeconfig(path string) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["kubeapi"] = &clientcmdapi.Cluster{Server: s.admin.Host, CertificateAuthorityData: s.admin.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: s.admin.CertData, ClientKeyData: s.admin.KeyData}
	kc.Contexts["kubeapi"] = &clientcmdapi.Context{Cluster: "kubeapi", AuthInfo: "admin"}
	kc.CurrentContext = "kubeapi"
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		return fmt.Errorf("writing the admin kubeconfig: %w", err)
	}
	return nil
}
