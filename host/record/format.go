// Package record keeps the agent's record of what it was asked and what the
// active policy answered, and reads it back for `nriwasm simulate --replay`.
//
// The record is a directory of files, each at most a quarter of the
// configured size; the oldest is deleted when all together pass it. Each file
// starts with a header holding a snapshot of the journal, so any file can be
// replayed on its own: initialize a policy with the header's topology and
// restore state, then send it the file's requests in order.
//
// # Format (version 1)
//
// A file is named record-<first seq, 20 digits>.nrr. It is a sequence of
// frames, each an unsigned varint length followed by that many bytes of a
// protobuf message Frame:
//
//	message Frame {
//	  Header header = 1;      // the first frame of a file, and only it
//	  Exchange exchange = 2;  // every other frame
//	}
//	message Header {
//	  uint32 version = 1;                    // 1
//	  string node_name = 2;
//	  string policy = 3;                     // the active policy's name
//	  bytes config = 4;                      // its configuration
//	  nriwasm.abi.v1.Topology topology = 5;
//	  nriwasm.abi.v1.RestoreState restore = 6;  // the journal after exchange seq
//	  uint64 seq = 7;
//	  string driver_name = 8;
//	}
//	message Exchange {
//	  uint64 seq = 1;                        // consecutive within a file
//	  nriwasm.abi.v1.Method method = 2;
//	  bytes request = 3;                     // the request message, as sent
//	  nriwasm.abi.v1.Response response = 4;  // the answer, grouped updates expanded
//	  string error = 5;                      // the call's error when it had no answer
//	}
//
// A crash can leave a torn last frame; the reader stops there.
package record

import (
	"encoding/binary"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"

	abi "github.com/nriwasm/nriwasm/abi/v1"
)

// Version is the format version Writer writes and Read reads.
const Version = 1

// Header starts every file of a record.
type Header struct {
	NodeName   string
	Policy     string
	Config     []byte
	DriverName string
	Topology   *abi.Topology
	// Restore is the journal after the exchange Seq (0: before any).
	Restore *abi.RestoreState
	Seq     uint64
}

// Exchange is one recorded request and its answer.
type Exchange struct {
	Seq      uint64
	Method   abi.Method
	Request  []byte
	Response *abi.Response // nil when the call failed without an answer
	Error    string        // the call's error, "" on success
}

// Err returns the recorded error as an error, nil when there was none; a
// policy's refusal is a *abi.PolicyError as it was in the agent.
func (x *Exchange) Err() error {
	if e := x.Response.GetError(); e != nil {
		return &abi.PolicyError{Method: x.Method, Code: e.Code, Field: e.Field, Message: e.Message}
	}
	if x.Error != "" {
		return errors.New(x.Error)
	}
	return nil
}

func appendMessage(b []byte, num protowire.Number, m interface {
	SizeVT() int
	MarshalToSizedBufferVT([]byte) (int, error)
}) ([]byte, error) {
	buf := make([]byte, m.SizeVT())
	if _, err := m.MarshalToSizedBufferVT(buf); err != nil {
		return nil, err
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, buf), nil
}

// encodeHeader returns h's frame, length included.
func encodeHeader(h *Header) ([]byte, error) {
	var m []byte
	m = protowire.AppendTag(m, 1, protowire.VarintType)
	m = protowire.AppendVarint(m, Version)
	for _, f := range []struct {
		n protowire.Number
		v []byte
	}{{2, []byte(h.NodeName)}, {3, []byte(h.Policy)}, {4, h.Config}, {8, []byte(h.DriverName)}} {
		m = protowire.AppendTag(m, f.n, protowire.BytesType)
		m = protowire.AppendBytes(m, f.v)
	}
	var err error
	if m, err = appendMessage(m, 5, h.Topology); err != nil {
		return nil, fmt.Errorf("encode topology: %w", err)
	}
	if m, err = appendMessage(m, 6, h.Restore); err != nil {
		return nil, fmt.Errorf("encode restore state: %w", err)
	}
	m = protowire.AppendTag(m, 7, protowire.VarintType)
	m = protowire.AppendVarint(m, h.Seq)
	f := protowire.AppendTag(nil, 1, protowire.BytesType)
	f = protowire.AppendBytes(f, m)
	return frame(f), nil
}

// encodeExchange returns x's frame, length included.
func encodeExchange(x *Exchange) ([]byte, error) {
	var m []byte
	m = protowire.AppendTag(m, 1, protowire.VarintType)
	m = protowire.AppendVarint(m, x.Seq)
	m = protowire.AppendTag(m, 2, protowire.VarintType)
	m = protowire.AppendVarint(m, uint64(x.Method))
	m = protowire.AppendTag(m, 3, protowire.BytesType)
	m = protowire.AppendBytes(m, x.Request)
	if x.Response != nil {
		var err error
		if m, err = appendMessage(m, 4, x.Response); err != nil {
			return nil, fmt.Errorf("encode response: %w", err)
		}
	}
	if x.Error != "" {
		m = protowire.AppendTag(m, 5, protowire.BytesType)
		m = protowire.AppendString(m, x.Error)
	}
	f := protowire.AppendTag(nil, 2, protowire.BytesType)
	f = protowire.AppendBytes(f, m)
	return frame(f), nil
}

func frame(msg []byte) []byte {
	return append(binary.AppendUvarint(nil, uint64(len(msg))), msg...)
}

// fields calls f with each field of a message; an error names the field.
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("field %d: %w", num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := f(num, typ, v, x); err != nil {
			return fmt.Errorf("field %d: %w", num, err)
		}
	}
	return nil
}

// decodeFrame decodes one frame's message: a header or an exchange.
func decodeFrame(b []byte) (*Header, *Exchange, error) {
	var h *Header
	var x *Exchange
	err := fields(b, func(num protowire.Number, _ protowire.Type, v []byte, _ uint64) error {
		var err error
		switch num {
		case 1:
			h, err = decodeHeader(v)
		case 2:
			x, err = decodeExchange(v)
		}
		return err
	})
	return h, x, err
}

func decodeHeader(b []byte) (*Header, error) {
	h := &Header{Topology: &abi.Topology{}, Restore: &abi.RestoreState{}}
	var version uint64
	err := fields(b, func(num protowire.Number, _ protowire.Type, v []byte, x uint64) error {
		switch num {
		case 1:
			version = x
		case 2:
			h.NodeName = string(v)
		case 3:
			h.Policy = string(v)
		case 4:
			h.Config = append([]byte(nil), v...)
		case 5:
			return h.Topology.UnmarshalVT(v)
		case 6:
			return h.Restore.UnmarshalVT(v)
		case 7:
			h.Seq = x
		case 8:
			h.DriverName = string(v)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	if version != Version {
		return nil, fmt.Errorf("header: version %d, this nriwasm reads version %d", version, Version)
	}
	return h, nil
}

func decodeExchange(b []byte) (*Exchange, error) {
	x := &Exchange{}
	err := fields(b, func(num protowire.Number, _ protowire.Type, v []byte, n uint64) error {
		switch num {
		case 1:
			x.Seq = n
		case 2:
			x.Method = abi.Method(n)
		case 3:
			x.Request = append([]byte(nil), v...)
		case 4:
			x.Response = &abi.Response{}
			return x.Response.UnmarshalVT(v)
		case 5:
			x.Error = string(v)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("exchange: %w", err)
	}
	return x, nil
}
