// Package wasmbin holds the low-level parts of the WebAssembly binary format
// shared by the packages that read or rewrite modules: LEB128 numbers, a
// bounds-checked Reader, and splitting a module into sections, reordering
// and re-encoding them, including named custom sections.
//
// It checks the module header, section framing and section order, but does
// not decode section contents beyond custom section names. Errors name the
// byte offset in the module where decoding failed, and every decoding error
// wraps ErrMalformed.
package wasmbin

import (
	"errors"
	"fmt"
)

var (
	// ErrMalformed reports a module that does not follow the binary format.
	// ErrTruncated and ErrOverflow wrap it.
	ErrMalformed = errors.New("malformed module")
	// ErrTruncated reports input that ends in the middle of a construct.
	ErrTruncated = fmt.Errorf("%w: unexpected end of input", ErrMalformed)
	// ErrOverflow reports a LEB128 number that does not fit its declared width.
	ErrOverflow = fmt.Errorf("%w: LEB128 value overflows its type", ErrMalformed)
)

// Header is the magic number followed by binary format version 1, which
// every core module starts with.
const Header = "\x00asm\x01\x00\x00\x00"

// Section ids of the WebAssembly binary format.
const (
	SectionCustom    byte = 0
	SectionType      byte = 1
	SectionImport    byte = 2
	SectionFunction  byte = 3
	SectionTable     byte = 4
	SectionMemory    byte = 5
	SectionGlobal    byte = 6
	SectionExport    byte = 7
	SectionStart     byte = 8
	SectionElement   byte = 9
	SectionCode      byte = 10
	SectionData      byte = 11
	SectionDataCount byte = 12
	SectionTag       byte = 13
)
