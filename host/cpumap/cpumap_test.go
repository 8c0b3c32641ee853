package cpumap

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	abi "github.com/nriwasm/nriwasm/abi/v1"
	"github.com/nriwasm/nriwasm/host/topology"
	"github.com/nriwasm/nriwasm/host/topology/topologytest"
)

func reference(t *testing.T) *abi.Topology {
	t.Helper()
	dir := t.TempDir()
	if err := topologytest.Reference2Socket().Write(dir); err != nil {
		t.Fatal(err)
	}
	topo, err := topology.Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	return topo
}

var holdings = []Holding{
	{Name: "default/web/nginx", Kind: KindContainer, CPUs: cpuset.MustParse("1-7,16-23")},
	{Name: "default/db/postgres", Kind: KindContainer, CPUs: cpuset.MustParse("8-9,24-25")},
	{Name: "default/web/sidecar", Kind: KindContainer, CPUs: cpuset.MustParse("1-7,16-23")},
	{Name: "kube-system/dns/coredns", Kind: KindContainer, CPUs: cpuset.MustParse("0")},
	{Name: "jobs/batch/worker", Kind: KindContainer},
}

// TestBuild: sockets, nodes and cores follow the hardware (siblings in one
// core), equal cpusets share a legend entry, labels go by first CPU, and
// every CPU lists exactly the holders whose cpuset has it.
func TestBuild(t *testing.T) {
	m := Build(reference(t), holdings, nil)
	if len(m.Sockets) != 2 || len(m.Sockets[1].Nodes) != 1 || m.Sockets[1].Nodes[0].ID != 1 || len(m.Sockets[1].Nodes[0].Cores) != 8 {
		t.Fatalf("layout: %+v", m.Sockets)
	}
	if c := m.Sockets[1].Nodes[0].Cores[0]; len(c.Threads) != 2 || c.Threads[0].CPU != 8 || c.Threads[1].CPU != 24 {
		t.Errorf("socket 1's first core = %+v, want cpu8 and its sibling cpu24", c)
	}
	want := []Holder{
		{Label: "A", Kind: KindContainer, Names: []string{"kube-system/dns/coredns"}, CPUs: "0"},
		{Label: "B", Kind: KindContainer, Names: []string{"default/web/nginx", "default/web/sidecar"}, CPUs: "1-7,16-23"},
		{Label: "C", Kind: KindContainer, Names: []string{"default/db/postgres"}, CPUs: "8-9,24-25"},
		{Label: "D", Kind: KindContainer, Names: []string{"jobs/batch/worker"}, CPUs: ""},
	}
	gotJSON, _ := json.Marshal(m.Holders)
	wantJSON, _ := json.Marshal(want)
	if string(gotJSON) != string(wantJSON) {
		t.Errorf("legend = %s\nwant %s", gotJSON, wantJSON)
	}
	for _, s := range m.Sockets {
		for _, n := range s.Nodes {
			for _, c := range n.Cores {
				for _, th := range c.Threads {
					var wantLabels []string
					for _, h := range want {
						if cpuset.MustParse(h.CPUs).Contains(th.CPU) {
							wantLabels = append(wantLabels, h.Label)
						}
					}
					if strings.Join(th.Holders, ",") != strings.Join(wantLabels, ",") {
						t.Errorf("cpu %d: holders %v, want %v", th.CPU, th.Holders, wantLabels)
					}
				}
			}
		}
	}
	// The input's order does not matter.
	rev := append([]Holding(nil), holdings...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	again, _ := json.Marshal(Build(reference(t), rev, nil))
	first, _ := json.Marshal(m)
	if string(again) != string(first) {
		t.Errorf("the holdings' order changes the map")
	}
}

// TestLabelsStay: with one Labels across maps a container keeps its label
// when others come and go.
func TestLabelsStay(t *testing.T) {
	topo := reference(t)
	var l Labels
	first := Build(topo, holdings[1:2], &l) // postgres alone: A
	second := Build(topo, holdings, &l)
	for _, h := range second.Holders {
		if h.Names[0] == "default/db/postgres" && h.Label != first.Holders[0].Label {
			t.Errorf("postgres was %s, now %s", first.Holders[0].Label, h.Label)
		}
	}
}

func TestText(t *testing.T) {
	var plain, colour bytes.Buffer
	m := Build(reference(t), holdings, nil)
	m.Title = "after step 3"
	if err := m.Text(&plain, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"after step 3\nsocket 0 · NUMA node 0 · 8 cores × 2 threads\n",
		"  cpu    0  1  2  3  4  5  6  7\n  held   A  B  B  B  B  B  B  B\n",
		"  cpu    8  9 10 11 12 13 14 15\n  held   C  C  ·  ·  ·  ·  ·  ·\n",
		"  B container 1-7,16-23: default/web/nginx, default/web/sidecar\n",
		"  D container unpinned (every CPU): jobs/batch/worker\n",
	} {
		if !strings.Contains(plain.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, plain.String())
		}
	}
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("plain text has escapes")
	}
	if err := m.Text(&colour, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(colour.String(), "\x1b[97;48;5;33mA\x1b[0m") {
		t.Errorf("colour text does not paint label A:\n%q", colour.String())
	}
}

func TestHTMLIsSelfContained(t *testing.T) {
	var b bytes.Buffer
	if err := HTML(&b, "test <page>", []*Map{Build(reference(t), holdings, nil)}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"<title>test &lt;page&gt;</title>",
		`<g class="cpu" data-cpu="8" data-holders="C">`,
		`<g class="cpu free" data-cpu="10" data-holders="">`,
		`data-label="B" data-kind="container" data-cpus="1-7,16-23" data-names="default/web/nginx, default/web/sidecar"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	const noIcon = `<link rel="icon" href="data:,">` // else a browser asks the server for /favicon.ico
	if !strings.Contains(page, noIcon) {
		t.Errorf("page lacks %q", noIcon)
	}
	rest := strings.ReplaceAll(strings.ReplaceAll(page, `xmlns="http://www.w3.org/2000/svg"`, ""), noIcon, "")
	for _, ext := range []string{"http://", "https://", "<script", "<link", "src="} {
		if strings.Contains(rest, ext) {
			t.Errorf("page refers outside itself (%q)", ext)
		}
	}
}

func TestHandlerFormats(t *testing.T) {
	m := Build(reference(t), holdings, nil)
	h := Handler(func(context.Context) (*Map, error) { return m, nil })
	for _, tt := range []struct{ query, accept, wantType, wantBody string }{
		{"", "", "text/html", `data-cpu="0" data-holders="A"`},
		{"?format=json", "", "application/json", `"label": "A"`},
		{"", "application/json", "application/json", `"cpu": 31`},
		{"?format=text", "", "text/plain", "  held   A  B"},
	} {
		req := httptest.NewRequest(http.MethodGet, "/debug/cpus"+tt.query, nil)
		if tt.accept != "" {
			req.Header.Set("Accept", tt.accept)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), tt.wantType) || !strings.Contains(rec.Body.String(), tt.wantBody) {
			t.Errorf("%q Accept %q: %d %s, body lacks %q", tt.query, tt.accept, rec.Code, rec.Header().Get("Content-Type"), tt.wantBody)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/cpus?format=xml", nil))
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `format "xml": want html, json or text`) {
		t.Errorf("format=xml: %d %s", rec.Code, rec.Body)
	}
}

// TestContainersTakeTheAssignment: a journaled container holds the CPUs the
// host applied (its assignment), not the runtime's request it was created
// with; without an assignment cpuset, its resources' cpuset.
func TestContainersTakeTheAssignment(t *testing.T) {
	rs := &abi.RestoreState{
		Pods: []*abi.PodSandbox{{Id: "p1", Name: "web", Namespace: "default"}},
		Containers: []*abi.Container{
			{Id: "c1", PodSandboxId: "p1", Name: "a", Resources: &abi.Resources{CpusetCpus: "0-31"}, Assignment: &abi.ContainerAdjustment{CpusetCpus: "3"}},
			{Id: "c2", PodSandboxId: "p1", Name: "b", Resources: &abi.Resources{CpusetCpus: "4-5"}, Assignment: &abi.ContainerAdjustment{}},
		},
	}
	got := Containers(rs)
	if len(got) != 2 || got[0].Name != "default/web/a" || got[0].CPUs.String() != "3" || got[1].Name != "default/web/b" || got[1].CPUs.String() != "4-5" {
		t.Errorf("Containers = %+v", got)
	}
}

// TestNoteInEveryFormat: a map's note (what it leaves out) is in the text
// under the title, in the JSON, and on the HTML page under the map's heading
// and in the drawing's description; a map without one shows none.
func TestNoteInEveryFormat(t *testing.T) {
	const note = `the policy's pools are not shown: pools[0].cpus: "0-3" <refused>`
	m := Build(reference(t), holdings, nil)
	m.Title = "CPUs of node n"
	h := Handler(func(context.Context) (*Map, error) { return m, nil })
	get := func(format string) string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/cpus?format="+format, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("format=%s: %d %s", format, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	escaped := `the policy&#39;s pools are not shown: pools[0].cpus: &#34;0-3&#34; &lt;refused&gt;`
	for format, absent := range map[string]string{"text": "note:", "json": `"note"`, "html": `class="note"`} {
		if body := get(format); strings.Contains(body, absent) {
			t.Errorf("format=%s without a note shows %q:\n%s", format, absent, body)
		}
	}
	m.Note = note
	for format, want := range map[string][]string{
		"text": {"CPUs of node n\nnote: " + note + "\nsocket 0"},
		"json": {`"note": "the policy's pools are not shown: pools[0].cpus: \"0-3\" \u003crefused\u003e"`},
		"html": {`<h2>CPUs of node n</h2>` + "\n" + `<p class="note">` + escaped + `</p>`, `<desc>` + escaped + `</desc>`},
	} {
		body := get(format)
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("format=%s lacks %q:\n%s", format, w, body)
			}
		}
	}
}
