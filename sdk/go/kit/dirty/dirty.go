// Package dirty keeps the list of things (pools, balloons) a policy changed
// since its last answer, so that the answer's updates look at their
// containers only, each thing once however often it changed.
//
// A thing carries its own mark (an embedded Mark), so adding it again costs
// a flag test rather than a map look-up or a scan:
//
//	type pool struct {
//		dirty.Mark
//		...
//	}
//	var changed dirty.List[*pool]
//	changed.Add(p) // any number of times
//	for _, p := range changed.Items() { ... }
//	changed.Clear()
package dirty

import "slices"

// Mark is embedded in the things a List holds: it records whether the
// thing is listed.
type Mark struct{ listed bool }

// Listed tells whether the thing is in a List.
func (m *Mark) Listed() bool { return m.listed }

func (m *Mark) mark() *Mark { return m }

// Marked is a thing with an embedded Mark (a pointer to a struct that
// embeds one).
type Marked interface{ mark() *Mark }

// List is a list of things, each at most once, in the order they were
// first added since the last Clear. The zero List is empty and ready.
type List[T Marked] struct{ items []T }

// Add lists x, unless it is listed already.
func (l *List[T]) Add(x T) {
	if m := x.mark(); !m.listed {
		m.listed = true
		l.items = append(l.items, x)
	}
}

// Items are the listed things; the slice is the List's own, valid until
// the next Add, Drop or Clear.
func (l *List[T]) Items() []T { return l.items }

// Sort orders the listed things by cmp.
func (l *List[T]) Sort(cmp func(a, b T) int) { slices.SortFunc(l.items, cmp) }

// Drop removes from the list every thing drop is true for (things that no
// longer exist, say).
func (l *List[T]) Drop(drop func(T) bool) {
	l.items = slices.DeleteFunc(l.items, func(x T) bool {
		if drop(x) {
			x.mark().listed = false
			return true
		}
		return false
	})
}

// Clear empties the list, keeping its room for the next changes.
func (l *List[T]) Clear() {
	for _, x := range l.items {
		x.mark().listed = false
	}
	clear(l.items)
	l.items = l.items[:0]
}
