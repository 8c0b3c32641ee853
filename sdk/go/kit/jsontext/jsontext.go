// Package jsontext reads and writes JSON without reflection, for Wasm
// guests: encoding/json and the reflect code it keeps are ~0.6 MB of a
// policy's module (docs/performance.md, "Where each guest's bytes go").
//
// Parse reads one document into the values encoding/json gives an `any`
// with Decoder.UseNumber: map[string]any, []any, string, bool, Number and
// nil. Append writes such values back as json.Marshal does (object keys
// sorted, the same escaping, HTML characters included), and AppendString
// writes one string, so a guest can write its own types' JSON field by
// field:
//
//	b := append([]byte(`{"cpuset":`), jsontext.AppendString(nil, cpus)...)
//
// Each behaviour is checked against encoding/json in this package's tests.
package jsontext

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Number is a JSON number as written in the document (json.Number's
// counterpart).
type Number string

// String returns the number as written.
func (n Number) String() string { return string(n) }

// Int64 is the number as an integer; an error if it is not one or is out
// of range.
func (n Number) Int64() (int64, error) { return strconv.ParseInt(string(n), 10, 64) }

// Float64 is the number as a float.
func (n Number) Float64() (float64, error) { return strconv.ParseFloat(string(n), 64) }

// SyntaxError is a document that is not one JSON value: Offset is the byte
// where reading stopped.
type SyntaxError struct {
	Offset int
	What   string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at byte %d: %s", e.Offset, e.What)
}

// maxDepth bounds nesting, as encoding/json's 10,000.
const maxDepth = 10000

// Parse reads data, one JSON value with optional white space around it,
// into map[string]any, []any, string, bool, Number or nil. It accepts what
// json.Valid accepts: invalid UTF-8 and lone surrogates in a string become
// U+FFFD, as encoding/json decodes them; a repeated object key keeps its
// last value.
func Parse(data []byte) (any, error) {
	p := parser{data: data}
	p.space()
	v := p.value(0)
	if p.err == nil {
		p.space()
		if p.pos < len(p.data) {
			p.fail("text after the value")
		}
	}
	if p.err != nil {
		return nil, p.err
	}
	return v, nil
}

// Valid reports whether data is one JSON value (json.Valid).
func Valid(data []byte) bool {
	_, err := Parse(data)
	return err == nil
}

type parser struct {
	data []byte
	pos  int
	err  error
}

func (p *parser) fail(what string) {
	if p.err == nil {
		p.err = &SyntaxError{Offset: p.pos, What: what}
	}
}

func (p *parser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *parser) literal(word string, v any) any {
	if len(p.data)-p.pos < len(word) || string(p.data[p.pos:p.pos+len(word)]) != word {
		p.fail("want " + word)
		return nil
	}
	p.pos += len(word)
	return v
}

func (p *parser) value(depth int) any {
	if depth > maxDepth {
		p.fail("nested too deeply")
		return nil
	}
	if p.pos >= len(p.data) {
		p.fail("unexpected end")
		return nil
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object(depth)
	case c == '[':
		return p.list(depth)
	case c == '"':
		return p.string()
	case c == 't':
		return p.literal("true", true)
	case c == 'f':
		return p.literal("false", false)
	case c == 'n':
		return p.literal("null", nil)
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	p.fail("want a value")
	return nil
}

func (p *parser) object(depth int) any {
	p.pos++ // {
	obj := map[string]any{}
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return obj
	}
	for p.err == nil {
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			p.fail("want an object key")
			return nil
		}
		k := p.string()
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			p.fail("want ':'")
			return nil
		}
		p.pos++
		p.space()
		obj[k] = p.value(depth + 1)
		p.space()
		if p.pos < len(p.data) && p.data[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.data) && p.data[p.pos] == '}' {
			p.pos++
			return obj
		}
		p.fail("want ',' or '}'")
	}
	return nil
}

func (p *parser) list(depth int) any {
	p.pos++ // [
	list := []any{}
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return list
	}
	for p.err == nil {
		p.space()
		list = append(list, p.value(depth+1))
		p.space()
		if p.pos < len(p.data) && p.data[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.pos < len(p.data) && p.data[p.pos] == ']' {
			p.pos++
			return list
		}
		p.fail("want ',' or ']'")
	}
	return nil
}

func (p *parser) digits() int {
	n := 0
	for p.pos < len(p.data) && p.data[p.pos] >= '0' && p.data[p.pos] <= '9' {
		p.pos++
		n++
	}
	return n
}

func (p *parser) number() any {
	start := p.pos
	if p.data[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(p.data) && p.data[p.pos] == '0':
		p.pos++
	case p.digits() == 0:
		p.fail("want a digit")
		return nil
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if p.digits() == 0 {
			p.fail("want a digit after '.'")
			return nil
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if p.digits() == 0 {
			p.fail("want a digit in the exponent")
			return nil
		}
	}
	return Number(p.data[start:p.pos])
}

// errBadEscape is a backslash that starts no JSON escape.
var errBadEscape = errors.New("bad escape")

// string reads a quoted string, decoding escapes; p.pos is at its '"'.
func (p *parser) string() string {
	p.pos++
	start := p.pos
	// The common case: no escapes, valid UTF-8, the bytes are the string.
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '"' {
			s := p.data[start:p.pos]
			p.pos++
			if utf8.Valid(s) {
				return string(s)
			}
			return string([]rune(string(s))) // invalid bytes become U+FFFD
		}
		if c == '\\' || c < 0x20 {
			break
		}
		p.pos++
	}
	b := []byte(string([]rune(string(p.data[start:p.pos])))) // U+FFFD for invalid bytes
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return string(b)
		case c < 0x20:
			p.fail("control character in a string")
			return ""
		case c == '\\':
			r, err := p.escape()
			if err != nil {
				p.fail(err.Error())
				return ""
			}
			b = utf8.AppendRune(b, r)
		case c < utf8.RuneSelf:
			b = append(b, c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			b = utf8.AppendRune(b, r) // RuneError for an invalid byte
			p.pos += size
		}
	}
	p.fail("unterminated string")
	return ""
}

// escape reads one escape (p.pos at its backslash), a surrogate pair as one.
func (p *parser) escape() (rune, error) {
	if p.pos+1 >= len(p.data) {
		return 0, errBadEscape
	}
	c := p.data[p.pos+1]
	p.pos += 2
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		r, ok := p.hex4()
		if !ok {
			return 0, errBadEscape
		}
		if !utf16.IsSurrogate(r) {
			return r, nil
		}
		// A high surrogate followed by a low one is one rune; anything
		// else leaves U+FFFD, the second escape read on its own.
		if p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
			save := p.pos
			p.pos += 2
			if r2, ok := p.hex4(); ok {
				if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
					return dec, nil
				}
			}
			p.pos = save
		}
		return utf8.RuneError, nil
	}
	return 0, errBadEscape
}

func (p *parser) hex4() (rune, bool) {
	if p.pos+4 > len(p.data) {
		return 0, false
	}
	var r rune
	for _, c := range p.data[p.pos : p.pos+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	p.pos += 4
	return r, true
}

// Append writes v as json.Marshal does: nil, bool, string, Number, int,
// int64, []any, []string and map[string]any (keys sorted), the values
// Parse gives and those a configuration's restrictions list. Any other type
// is an error naming it.
func Append(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case string:
		return AppendString(b, v), nil
	case Number:
		if v == "" {
			return append(b, '0'), nil // json.Number("") marshals as 0
		}
		return append(b, v...), nil
	case int:
		return strconv.AppendInt(b, int64(v), 10), nil
	case int64:
		return strconv.AppendInt(b, v, 10), nil
	case []string:
		if v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, s := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, s)
		}
		return append(b, ']'), nil
	case []any:
		if v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = Append(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		if v == nil {
			return append(b, "null"...), nil
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(AppendString(b, k), ':')
			var err error
			if b, err = Append(b, v[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return nil, fmt.Errorf("jsontext: cannot write a %T", v)
}

const hexDigits = "0123456789abcdef"

// AppendString writes s as a JSON string as json.Marshal does: '"' and '\'
// escaped, \b \f \n \r \t for those controls and \u00XX for the others,
// <, > and & as \u003c \u003e \u0026, U+2028 and U+2029 escaped, and each
// invalid UTF-8 byte as \ufffd.
func AppendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
