package balloons

import (
	"strconv"

	"github.com/nriwasm/nriwasm/sdk/go/kit/jsontext"
)

// The state dump and a prepared device's status are written field by field
// as encoding/json would write them from their `json` tags (dumpjson_test.go
// compares the two), so the module links no encoding/json (RATIONALE.md,
// "Why is the configuration decoded by hand?").

// jsonObject writes one JSON object's fields in order.
type jsonObject struct {
	b []byte
	n int
}

func (o *jsonObject) key(k string) {
	if o.n == 0 {
		o.b = append(o.b, '{')
	} else {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = append(jsontext.AppendString(o.b, k), ':')
}

func (o *jsonObject) str(k, v string) { o.key(k); o.b = jsontext.AppendString(o.b, v) }

// strOmit is a string field tagged omitempty.
func (o *jsonObject) strOmit(k, v string) {
	if v != "" {
		o.str(k, v)
	}
}

func (o *jsonObject) int(k string, v int64) { o.key(k); o.b = strconv.AppendInt(o.b, v, 10) }

// strs is a []string field: null when nil, as encoding/json writes it.
func (o *jsonObject) strs(k string, v []string) { jsonArray(o, k, v, appendString) }

func appendString(s *string, b []byte) []byte { return jsontext.AppendString(b, *s) }

// jsonArray writes the field k, a JSON array of items, each written by
// item: null when items is nil, as encoding/json writes a nil slice.
func jsonArray[T any](o *jsonObject, k string, items []T, item func(*T, []byte) []byte) {
	o.key(k)
	if items == nil {
		o.b = append(o.b, "null"...)
		return
	}
	o.b = append(o.b, '[')
	for i := range items {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.b = item(&items[i], o.b)
	}
	o.b = append(o.b, ']')
}

func (o *jsonObject) end() []byte {
	if o.n == 0 {
		return append(o.b, "{}"...)
	}
	return append(o.b, '}')
}

// appendJSON writes d as json.Marshal does.
func (d *Dump) appendJSON(b []byte) []byte {
	o := jsonObject{b: b}
	o.str("available", d.Available)
	o.strOmit("reserved", d.Reserved)
	o.str("free", d.Free)
	jsonArray(&o, "balloons", d.Balloons, (*DumpBalloon).appendJSON)
	jsonArray(&o, "containers", d.Containers, (*DumpContainer).appendJSON)
	return o.end()
}

func (b *DumpBalloon) appendJSON(out []byte) []byte {
	o := jsonObject{b: out}
	o.str("name", b.Name)
	o.str("type", b.Type)
	o.int("instance", int64(b.Instance))
	o.str("cpus", b.CPUs)
	o.strOmit("sharedIdle", b.SharedIdle)
	if len(b.Parts) > 0 {
		o.strs("parts", b.Parts)
	}
	o.int("requestMilli", b.RequestMilli)
	o.int("minCPUs", int64(b.MinCPUs))
	o.int("maxCPUs", int64(b.MaxCPUs))
	o.strs("containers", b.Containers)
	o.strOmit("claim", b.Claim)
	o.strOmit("device", b.Device)
	return o.end()
}

func (c *DumpContainer) appendJSON(out []byte) []byte {
	o := jsonObject{b: out}
	o.str("id", c.ID)
	o.str("namespace", c.Namespace)
	o.strOmit("balloon", c.Balloon)
	o.str("cpus", c.CPUs)
	o.str("mems", c.Mems)
	o.int("requestMilli", c.Milli)
	if c.HideHT {
		o.key("hideHyperthreads")
		o.b = append(o.b, "true"...)
	}
	o.strOmit("memoryTypes", c.MemoryTypes)
	return o.end()
}

// appendJSON writes s as json.Marshal does.
func (s statusData) appendJSON(b []byte) []byte {
	o := jsonObject{b: b}
	o.str("balloon", s.Balloon)
	o.str("cpuset", s.CPUSet)
	o.str("numaNodes", s.NUMANodes)
	return o.end()
}
