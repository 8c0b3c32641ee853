package cpumap

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Handler serves the map source returns (given the request's context): JSON when the request's format
// query parameter is "json" or its Accept header asks for application/json,
// plain text for format=text, else the HTML page. A source error is a 503
// with its text.
func Handler(source func(context.Context) (*Map, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m, err := source(r.Context())
		if err != nil {
			http.Error(w, "cpu map: "+err.Error(), http.StatusServiceUnavailable)
			return
		}
		var b bytes.Buffer
		format := r.URL.Query().Get("format")
		if format == "" && strings.Contains(r.Header.Get("Accept"), "application/json") {
			format = "json"
		}
		switch format {
		case "json":
			w.Header().Set("Content-Type", "application/json")
			enc := json.NewEncoder(&b)
			enc.SetIndent("", "  ")
			err = enc.Encode(m)
		case "text":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			err = m.Text(&b, false)
		case "", "html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			err = HTML(&b, m.Title, []*Map{m})
		default:
			http.Error(w, fmt.Sprintf("format %q: want html, json or text", format), http.StatusBadRequest)
			return
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(b.Bytes())
	})
}
