//go:build integration && browser

// Package browser_test opens the CPU maps nriwasm draws — `simulate --output
// html` and the agent's live /debug/cpus — in a real headless Chromium
// (Debian's chromium package; `make browser-test` installs it) over the
// DevTools protocol, and checks that the page renders, logs no console error
// or exception, and shows each container on the CPUs the decisions (or the
// real cgroup) say.
package browser_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/nriwasm/nriwasm/abi/cpuset"
	"github.com/nriwasm/nriwasm/integration/agent"
)

// binary is the nriwasm binary TestMain builds; chromium the browser.
var binary, chromium string

func TestMain(m *testing.M) {
	agent.Main(m, "nriwasm-browser-", &binary, func(string) error {
		var err error
		if chromium, err = exec.LookPath("chromium"); err != nil {
			return fmt.Errorf("the browser tests need Debian's chromium (make browser-test installs it): %w", err)
		}
		return nil
	}, nil)
}

// page is what the browser shows of a CPU map page.
type page struct {
	Sections []section `json:"sections"`
}

type section struct {
	Title string `json:"title"`
	// Width and Height are the SVG's rendered size.
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
	Legend []struct {
		Label string `json:"label"`
		Names string `json:"names"`
		CPUs  string `json:"cpus"`
	} `json:"legend"`
	Cells []struct {
		CPU     uint32  `json:"cpu"`
		Holders string  `json:"holders"`
		Width   float64 `json:"width"`
		Height  float64 `json:"height"`
	} `json:"cells"`
}

// readPage is run in the page: every map section's legend and CPU cells,
// with their rendered sizes.
const readPage = `({sections: [...document.querySelectorAll("section.map")].map(s => {
  const svg = s.querySelector("svg").getBoundingClientRect();
  return {
    title: s.querySelector("h2").textContent,
    width: svg.width, height: svg.height,
    legend: [...s.querySelectorAll("tr.holder")].map(r => ({label: r.dataset.label, names: r.dataset.names, cpus: r.dataset.cpus})),
    cells: [...s.querySelectorAll("g.cpu")].map(g => { const b = g.querySelector("rect").getBoundingClientRect();
      return {cpu: Number(g.dataset.cpu), holders: g.dataset.holders, width: b.width, height: b.height}; }),
  };
})})`

// open loads url in a fresh headless Chromium and returns what readPage
// finds and every console error or warning, exception and error or warning
// log entry (a resource that failed to load is one).
func open(t *testing.T, url string) (*page, []string) {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	var mu sync.Mutex
	var problems []string
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning || e.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value))
				}
				problems = append(problems, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, fmt.Sprintf("exception: %s (line %d)", e.ExceptionDetails.Text, e.ExceptionDetails.LineNumber))
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError || e.Entry.Level == log.EntryLevelWarning {
				problems = append(problems, fmt.Sprintf("log %s: %s (%s)", e.Entry.Level, e.Entry.Text, e.Entry.URL))
			}
		}
	}); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if err := chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			if _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); err != nil {
				return err
			}
			_, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{})
			return err
		}),
		chromedp.Navigate(url),
		chromedp.WaitReady(chromedp.CSS("body")),
	); err != nil {
		t.Fatalf("chromium on %s: %v", url, err)
	}
	p, err := chromedp.Run(ctx, chromedp.Evaluate[page](readPage))
	if err != nil {
		t.Fatalf("chromium on %s: reading the page: %v", url, err)
	}
	mu.Lock()
	defer mu.Unlock()
	return &p, slices.Clone(problems)
}

// holderCPUs is, in a section, the CPUs whose cells show name's label.
func (s section) holderCPUs(t *testing.T, name string) (cpus string, listed bool) {
	t.Helper()
	label := ""
	for _, l := range s.Legend {
		if slices.Contains(strings.Split(l.Names, ", "), name) {
			label = l.Label
		}
	}
	if label == "" {
		return "", false
	}
	var ids []uint32
	for _, c := range s.Cells {
		if slices.Contains(strings.Fields(c.Holders), label) {
			ids = append(ids, c.CPU)
		}
	}
	return cpuset.New(ids...).String(), true
}

// checkRendered fails the test for an empty drawing or a cell of no size.
func checkRendered(t *testing.T, s section) {
	t.Helper()
	if s.Width <= 0 || s.Height <= 0 || len(s.Cells) == 0 {
		t.Errorf("%s: the map is not drawn (svg %gx%g, %d cells)", s.Title, s.Width, s.Height, len(s.Cells))
	}
	for _, c := range s.Cells {
		if c.Width <= 0 || c.Height <= 0 {
			t.Errorf("%s: cpu %d is drawn %gx%g", s.Title, c.CPU, c.Width, c.Height)
		}
	}
}

// TestSimulateHTML: `simulate --output html` on the reference machine, for
// each built-in policy's bundled example: a drawn map per step, no console
// error, and after each step every container the step placed on exactly the
// CPUs the report says.
func TestSimulateHTML(t *testing.T) {
	for _, policy := range []string{"topology-aware", "balloons"} {
		t.Run(policy, func(t *testing.T) {
			dir := t.TempDir()
			html := filepath.Join(dir, "report.html")
			run(t, html, "simulate", "--policy", policy, "--native", "--output", "html")
			var report struct {
				Steps []struct {
					Containers []struct{ Pod, Name, CPUs string }
				}
			}
			if err := json.Unmarshal(run(t, "", "simulate", "--policy", policy, "--native", "--output", "json"), &report); err != nil {
				t.Fatal(err)
			}
			p, problems := open(t, "file://"+html)
			if len(problems) > 0 {
				t.Errorf("the page logged:\n\t%s", strings.Join(problems, "\n\t"))
			}
			if len(p.Sections) != len(report.Steps) {
				t.Fatalf("%d maps for %d steps", len(p.Sections), len(report.Steps))
			}
			checked := 0
			for i, step := range report.Steps {
				s := p.Sections[i]
				checkRendered(t, s)
				for _, c := range step.Containers {
					name := c.Pod + "/" + c.Name
					got, listed := s.holderCPUs(t, name)
					if !listed || got != c.CPUs {
						t.Errorf("%s: %s is drawn on cpus %q (in the legend: %t), the report says %q", s.Title, name, got, listed, c.CPUs)
					}
					checked++
				}
			}
			if checked == 0 {
				t.Fatal("no container was checked")
			}
			t.Logf("%d maps, %d container placements checked", len(p.Sections), checked)
		})
	}
}

// run runs nriwasm with args, writing stdout to file (unless ""), and
// returns stdout.
func run(t *testing.T, file string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(binary, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("nriwasm %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if file != "" {
		if err := os.WriteFile(file, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
