package cpumap

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// coresPerRow wraps a node's cores onto more rows beyond this many.
const coresPerRow = 16

// free marks a CPU nothing holds.
const free = "·"

// palette are the ANSI 256-colour backgrounds of labels, in legend order.
var palette = []int{33, 166, 34, 127, 136, 30, 161, 62, 94, 28, 169, 24}

// Text writes the map as text (without the machine's name): its title and
// note, then per socket and NUMA node rows of CPU ids
// (columns are cores, one row per thread of the core) with the labels of
// their holders below, then the legend. With colour, each label has its own
// background colour (ANSI escapes, for a terminal).
func (m *Map) Text(w io.Writer, colour bool) error {
	var b strings.Builder
	if m.Title != "" {
		fmt.Fprintf(&b, "%s\n", m.Title)
	}
	if m.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", m.Note)
	}
	colours := map[string]int{}
	for i, h := range m.Holders {
		colours[h.Label] = palette[i%len(palette)]
	}
	paint := func(label string) string {
		if !colour {
			return label
		}
		if label == free {
			return "\x1b[2m" + label + "\x1b[0m"
		}
		return fmt.Sprintf("\x1b[97;48;5;%dm%s\x1b[0m", colours[label], label)
	}
	for _, s := range m.Sockets {
		for _, n := range s.Nodes {
			threads := 0
			for _, c := range n.Cores {
				threads = max(threads, len(c.Threads))
			}
			fmt.Fprintf(&b, "socket %d · NUMA node %d · %d cores × %d threads\n", s.ID, n.ID, len(n.Cores), threads)
			for lo := 0; lo < len(n.Cores); lo += coresPerRow {
				cores := n.Cores[lo:min(lo+coresPerRow, len(n.Cores))]
				width := 1
				for _, c := range cores {
					for _, t := range c.Threads {
						width = max(width, len(strconv.Itoa(int(t.CPU))), len(strings.Join(t.Holders, "")))
					}
				}
				for row := 0; row < threads; row++ {
					ids, holds := "  cpu  ", "  held "
					for _, c := range cores {
						if row >= len(c.Threads) {
							ids += " " + strings.Repeat(" ", width)
							holds += " " + strings.Repeat(" ", width)
							continue
						}
						t := c.Threads[row]
						ids += fmt.Sprintf(" %*d", width, t.CPU)
						cell, pad := free, width-1
						if len(t.Holders) > 0 {
							cell, pad = "", width-len(strings.Join(t.Holders, ""))
							for _, l := range t.Holders {
								cell += paint(l)
							}
						} else {
							cell = paint(free)
						}
						holds += " " + strings.Repeat(" ", pad) + cell
					}
					fmt.Fprintf(&b, "%s\n%s\n", strings.TrimRight(ids, " "), strings.TrimRight(holds, " "))
				}
			}
		}
	}
	for _, h := range m.Holders {
		cpus := h.CPUs
		if cpus == "" {
			cpus = "unpinned (every CPU)"
		}
		fmt.Fprintf(&b, "  %s %-9s %s: %s\n", paint(h.Label), h.Kind, cpus, h.Summary())
	}
	fmt.Fprintf(&b, "  %s nothing pinned\n", paint(free))
	_, err := io.WriteString(w, b.String())
	return err
}
