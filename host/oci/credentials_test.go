package oci

import (
	"context"
	"encoding/base64"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/internal/builtintest"
)

// basicAuth lets only user:pass through.
func basicAuth(user, pass string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

func TestCredentials(t *testing.T) {
	reg := newRegistry(t, basicAuth("robot", "s3cret"))
	r := reg.ref(t, "policies/conformance:v1")
	dockerDir := t.TempDir()
	t.Setenv(EnvDockerConfig, dockerDir)
	auth := base64.StdEncoding.EncodeToString([]byte("robot:s3cret"))
	if err := os.WriteFile(filepath.Join(dockerDir, "config.json"), []byte(`{"auths": {"`+reg.host+`": {"auth": "`+auth+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	remote := func(t *testing.T, getenv func(string) string) Remote {
		t.Helper()
		cred, err := Credentials(getenv)
		if err != nil {
			t.Fatal(err)
		}
		rem := reg.remote()
		rem.Credential = cred
		return rem
	}
	// The docker config file's credentials push and pull.
	push(t, remote(t, env(nil)), r, builtintest.Module(t, "conformance"))
	if _, err := newFetcher(t, WithRemote(remote(t, env(nil)))).Load(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	// The environment's take precedence.
	wrong := env(map[string]string{EnvUsername: "robot", EnvPassword: "wrong"})
	if _, err := newFetcher(t, WithRemote(remote(t, wrong))).Load(context.Background(), r); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("Load with wrong credentials = %v, want a 401", err)
	}
	right := env(map[string]string{EnvUsername: "robot", EnvPassword: "s3cret"})
	t.Setenv(EnvDockerConfig, t.TempDir()) // no file: anonymous
	if _, err := newFetcher(t, WithRemote(remote(t, right))).Load(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	if _, err := newFetcher(t, WithRemote(remote(t, env(nil)))).Load(context.Background(), r); err == nil {
		t.Fatal("Load without credentials succeeded")
	}
	if _, err := Credentials(env(map[string]string{EnvUsername: "robot"})); err == nil || !strings.Contains(err.Error(), EnvPassword) {
		t.Fatalf("Credentials with a user and no password = %v", err)
	}
}
