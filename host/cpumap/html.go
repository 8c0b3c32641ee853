package cpumap

import (
	"fmt"
	"html/template"
	"io"
	"strings"
)

// Geometry of the SVG drawing, in pixels.
const (
	cellW, cellH = 44, 26 // one thread
	pad          = 6      // inside a box
	labelH       = 18     // a box's caption
)

// colours are the labels' fills, in legend order (the text palette's hues).
var colours = []string{"#0087ff", "#d75f00", "#00af00", "#af005f", "#af8700", "#008787", "#d7005f", "#5f5fd7", "#875f00", "#008700", "#d75faf", "#005f87"}

// freeColour fills a CPU nothing holds.
const freeColour = "#e4e4e4"

// shape is one drawn element of a map.
type shape struct {
	X, Y, W, H int
	// Class is "socket", "node" or "cpu".
	Class   string
	Fill    string
	Caption string
	// CPU and Holders are a cpu cell's data attributes.
	CPU     uint32
	Holders string
	Title   string
}

// drawing is one map laid out for the page.
type drawing struct {
	*Map
	W, H    int
	Shapes  []shape
	Legend  []legendRow
	Summary string
}

type legendRow struct {
	Holder
	Fill string
}

// layout places sockets one under another, a socket's NUMA nodes side by
// side, a node's cores in columns (coresPerRow a row) with their threads
// stacked.
func (m *Map) layout() drawing {
	d := drawing{Map: m}
	fill := map[string]string{}
	for i, h := range m.Holders {
		fill[h.Label] = colours[i%len(colours)]
		d.Legend = append(d.Legend, legendRow{Holder: h, Fill: fill[h.Label]})
	}
	y := 0
	for _, s := range m.Sockets {
		sx, sy := 0, y
		x := sx + pad
		sh := 0
		var inner []shape
		for _, n := range s.Nodes {
			threads := 1
			for _, c := range n.Cores {
				threads = max(threads, len(c.Threads))
			}
			cols := min(len(n.Cores), coresPerRow)
			rows := (len(n.Cores) + coresPerRow - 1) / coresPerRow
			nw := pad*2 + cols*(cellW+2)
			nh := labelH + pad + rows*(threads*cellH+pad)
			ny := sy + labelH + pad
			inner = append(inner, shape{X: x, Y: ny, W: nw, H: nh, Class: "node", Caption: fmt.Sprintf("NUMA node %d", n.ID)})
			for i, c := range n.Cores {
				cx := x + pad + (i%coresPerRow)*(cellW+2)
				cy := ny + labelH + (i/coresPerRow)*(threads*cellH+pad)
				for j, t := range c.Threads {
					f, holders, title := freeColour, strings.Join(t.Holders, " "), fmt.Sprintf("cpu %d: nothing pinned", t.CPU)
					if len(t.Holders) > 0 {
						f = fill[t.Holders[0]]
						var names []string
						for _, l := range t.Holders {
							for _, h := range m.Holders {
								if h.Label == l {
									names = append(names, l+" "+h.Summary())
								}
							}
						}
						title = fmt.Sprintf("cpu %d: %s", t.CPU, strings.Join(names, "; "))
					}
					inner = append(inner, shape{X: cx, Y: cy + j*cellH, W: cellW, H: cellH - 2, Class: "cpu", Fill: f,
						Caption: fmt.Sprintf("%d %s", t.CPU, strings.Join(t.Holders, "")), CPU: t.CPU, Holders: holders, Title: title})
				}
			}
			x += nw + pad
			sh = max(sh, labelH+pad+nh+pad)
		}
		d.Shapes = append(d.Shapes, shape{X: sx, Y: sy, W: x, H: sh, Class: "socket", Caption: fmt.Sprintf("socket %d", s.ID)})
		d.Shapes = append(d.Shapes, inner...)
		d.W = max(d.W, x+1)
		y += sh + pad
	}
	d.H = y + 1
	return d
}

var page = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<link rel="icon" href="data:,">
<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; }
h2 { font-size: 1.1em; margin-top: 2em; }
svg text { font-family: monospace; font-size: 12px; }
svg .socket { fill: #f7f7f7; stroke: #888; }
svg .node { fill: #fff; stroke: #bbb; }
svg g.socket > text, svg g.node > text { fill: #444; }
svg .cpu text { fill: #fff; }
svg .cpu.free text { fill: #555; }
table { border-collapse: collapse; margin-top: .5em; }
td { padding: 2px 8px; font-family: monospace; }
.swatch { width: 1.2em; }
.note { color: #a40; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{with .Machine}}<p class="machine">machine: {{.}}</p>
{{end}}{{range $i, $d := .Maps}}<section class="map" id="map-{{$i}}">
<h2>{{$d.Map.Title}}</h2>
{{with $d.Map.Note}}<p class="note">{{.}}</p>
{{end}}<svg xmlns="http://www.w3.org/2000/svg" width="{{$d.W}}" height="{{$d.H}}" viewBox="0 0 {{$d.W}} {{$d.H}}" role="img" aria-label="CPU map">
{{with $d.Map.Note}}<desc>{{.}}</desc>
{{end}}{{range $d.Shapes}}{{if eq .Class "cpu"}}<g class="cpu{{if not .Holders}} free{{end}}" data-cpu="{{.CPU}}" data-holders="{{.Holders}}"><title>{{.Title}}</title><rect x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" rx="3" fill="{{.Fill}}"/><text x="{{.X}}" y="{{.Y}}" dx="4" dy="16">{{.Caption}}</text></g>
{{else}}<g class="{{.Class}}"><rect class="{{.Class}}" x="{{.X}}" y="{{.Y}}" width="{{.W}}" height="{{.H}}" rx="4"/><text x="{{.X}}" y="{{.Y}}" dx="6" dy="14">{{.Caption}}</text></g>
{{end}}{{end}}</svg>
<table class="legend">
{{range $d.Legend}}<tr class="holder" data-label="{{.Label}}" data-kind="{{.Kind}}" data-cpus="{{.CPUs}}" data-names="{{.Summary}}"><td class="swatch" style="background: {{.Fill}}"></td><td>{{.Label}}</td><td>{{.Kind}}</td><td>{{if .CPUs}}{{.CPUs}}{{else}}unpinned{{end}}</td><td>{{.Summary}}</td></tr>
{{end}}</table>
</section>
{{end}}</body>
</html>
`))

// HTML writes one self-contained page (inline SVG and CSS, no script, no
// network: an empty inline icon, so a browser does not ask the server that
// serves the page for /favicon.ico) with a drawing and a legend per map,
// under the first map's machine name. A map's note is a <p class="note"> under its heading and the
// drawing's <desc>. Each CPU is a <g class="cpu"> with data-cpu and
// data-holders (its holders' labels); each legend row a <tr class="holder">
// with data-label, data-kind, data-cpus and data-names.
func HTML(w io.Writer, title string, maps []*Map) error {
	if title == "" {
		title = "CPU map"
	}
	var ds []drawing
	for _, m := range maps {
		ds = append(ds, m.layout())
	}
	machine := ""
	if len(maps) > 0 {
		machine = maps[0].Machine
	}
	if err := page.Execute(w, struct {
		Title, Machine string
		Maps           []drawing
	}{title, machine, ds}); err != nil {
		return fmt.Errorf("cpumap: render HTML: %w", err)
	}
	return nil
}
