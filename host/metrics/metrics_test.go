package metrics_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nriwasm/nriwasm/host/metrics"
)

func TestHandler(t *testing.T) {
	m := metrics.New()
	m.ObserveCall("CreateContainer", 50*time.Microsecond, "")
	m.ObserveCall("CreateContainer", time.Second, "trap")
	m.Rebuilt(2)
	m.Refused("CreateContainer", "adjustment.cpuset_cpus")
	m.FailedOpen()
	m.Managed(1, 3, 0)
	m.ConfigReload(metrics.ReloadRejected)
	m.Swap(metrics.SwapRefused)
	m.Connection(metrics.ConnLost)
	var ready atomic.Bool
	srv := httptest.NewServer(metrics.Handler(m, func() error {
		if !ready.Load() {
			return errors.New("waiting for the runtime")
		}
		return nil
	}))
	defer srv.Close()

	tests := []struct {
		path     string
		wantCode int
		wantBody []string
	}{
		{"/healthz", 200, []string{"ok"}},
		{"/readyz", 503, []string{"waiting for the runtime"}},
		{"/metrics", 200, []string{
			`nriwasm_policy_call_duration_seconds_count{method="CreateContainer"} 2`,
			`nriwasm_policy_call_errors_total{kind="trap",method="CreateContainer"} 1`,
			`nriwasm_policy_instance_rebuilds_total 2`,
			`nriwasm_policy_answers_refused_total{field="adjustment.cpuset_cpus",method="CreateContainer"} 1`,
			`nriwasm_fail_open_total 1`,
			`nriwasm_managed_containers 3`,
			`nriwasm_config_reloads_total{result="rejected"} 1`,
			`nriwasm_policy_swaps_total{result="refused"} 1`,
			`nriwasm_nri_connections_total{result="lost"} 1`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			code, body := get(t, srv.URL+tt.path)
			if code != tt.wantCode {
				t.Fatalf("status %d, want %d", code, tt.wantCode)
			}
			for _, w := range tt.wantBody {
				if !strings.Contains(body, w) {
					t.Errorf("body lacks %q", w)
				}
			}
		})
	}
	ready.Store(true)
	if code, _ := get(t, srv.URL+"/readyz"); code != 200 {
		t.Fatalf("/readyz %d once ready", code)
	}
}

func TestNilMetrics(t *testing.T) {
	var m *metrics.Metrics // components run without metrics
	m.ObserveCall("x", time.Second, "trap")
	m.Rebuilt(1)
	m.Refused("x", "y")
	m.FailedOpen()
	m.Managed(1, 2, 3)
	m.ConfigReload(metrics.ReloadApplied)
	m.Swap(metrics.SwapAccepted)
	m.Connection(metrics.ConnConnected)
}

func TestServe(t *testing.T) {
	l, err := metrics.Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- metrics.Serve(ctx, l, metrics.Handler(metrics.New(), func() error { return nil })) }()
	if code, _ := get(t, "http://"+l.Addr().String()+"/readyz"); code != 200 {
		t.Fatalf("/readyz %d", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
