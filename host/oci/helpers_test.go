package oci

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/nriwasm/nriwasm/host/oci/ref"
	"github.com/nriwasm/nriwasm/host/oci/signature"
	"github.com/nriwasm/nriwasm/internal/builtintest"
)

// compileCache is shared by the tests that run a module, so each built-in
// module is compiled once per test binary.
var compileCache string

func TestMain(m *testing.M) {
	builtintest.MainWithCache(m, &compileCache)
}

// testRegistry is go-containerregistry's in-process registry over httptest.
type testRegistry struct {
	srv  *httptest.Server
	host string
}

func newRegistry(t testing.TB, wrap ...func(http.Handler) http.Handler) *testRegistry {
	t.Helper()
	var h http.Handler = registry.New(registry.Logger(log.New(io.Discard, "", 0)), registry.WithReferrersSupport(true))
	for _, w := range wrap {
		h = w(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &testRegistry{srv: srv, host: strings.TrimPrefix(srv.URL, "http://")}
}

func (r *testRegistry) remote() Remote {
	return Remote{PlainHTTP: []string{r.host}, Client: r.srv.Client()}
}

func (r *testRegistry) ref(t testing.TB, repoTag string) ref.Reference {
	t.Helper()
	return mustParse(t, "oci://"+r.host+"/"+repoTag)
}

func mustParse(t testing.TB, s string) ref.Reference {
	t.Helper()
	r, err := ref.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// push pushes a built-in module to r and returns its manifest digest.
func push(t testing.TB, rem Remote, r ref.Reference, module []byte) string {
	t.Helper()
	ctx := context.Background()
	target, err := rem.Open(ctx, r, true)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := Push(ctx, target, r.Tag, module)
	if err != nil {
		t.Fatal(err)
	}
	return desc.Digest.String()
}

func sign(t testing.TB, rem Remote, r ref.Reference, s *signature.Signer) {
	t.Helper()
	ctx := context.Background()
	target, err := rem.Open(ctx, r, false)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := target.Resolve(ctx, r.Object())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Attach(ctx, target, r.Name(), desc); err != nil {
		t.Fatal(err)
	}
}

type testKey struct {
	priv *ecdsa.PrivateKey
}

func newKey(t testing.TB) testKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return testKey{priv: k}
}

func (k testKey) signer(t testing.TB) *signature.Signer {
	t.Helper()
	s, err := signature.NewSigner(k.priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (k testKey) verifier(t testing.TB) *signature.Verifier {
	t.Helper()
	v, err := signature.NewVerifier(k.priv.Public())
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// logBuffer is a logger whose text output the test reads.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() logr.Logger {
	return logr.FromSlogHandler(slog.NewTextHandler(io.MultiWriter(b), nil))
}

func newFetcher(t testing.TB, opts ...Option) *Fetcher {
	t.Helper()
	f, err := NewFetcher(context.Background(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// timeoutShort bounds registry exchanges in tests where the registry is down.
const timeoutShort = 5 * time.Second

// down returns the registry's remote with every request failing, as if it
// were unreachable.
func (r *testRegistry) down() Remote {
	rem := r.remote()
	c := *r.srv.Client()
	c.Transport = downTransport{}
	rem.Client = &c
	return rem
}

// downTransport fails every request as an unreachable registry does.
type downTransport struct{}

func (downTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("dial tcp: connection refused")
}
