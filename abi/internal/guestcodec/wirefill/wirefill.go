// Package wirefill fills protobuf messages with random values through
// protobuf reflection, for tests that compare two codecs of the same
// messages (guestcodec's round trip between the host's codec and the
// guest's).
package wirefill

import (
	"math"
	"math/rand/v2"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Fill sets a random subset of m's fields — every kind the ABI uses: scalars
// at their edges and in between, strings, bytes, enums (known and unknown
// numbers), nested messages down to depth levels, lists, maps and one member
// of each oneof (or none) — each other field present about two times in three.
func Fill(rng *rand.Rand, m protoreflect.Message, depth int) {
	// One member of each oneof, chosen alike, or none.
	chosen := map[protoreflect.FullName]protoreflect.Name{}
	oneofs := m.Descriptor().Oneofs()
	for i := range oneofs.Len() {
		o := oneofs.Get(i)
		if n := rng.IntN(o.Fields().Len() + 1); n < o.Fields().Len() {
			chosen[o.FullName()] = o.Fields().Get(n).Name()
		}
	}
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		if o := f.ContainingOneof(); o != nil && !o.IsSynthetic() {
			if chosen[o.FullName()] != f.Name() {
				continue
			}
		} else if rng.IntN(3) == 0 {
			continue
		}
		if f.Kind() == protoreflect.MessageKind && depth <= 0 {
			continue
		}
		switch {
		case f.IsList():
			list := m.Mutable(f).List()
			for range rng.IntN(4) {
				if f.Kind() == protoreflect.MessageKind {
					e := list.NewElement()
					Fill(rng, e.Message(), depth-1)
					list.Append(e)
					continue
				}
				list.Append(scalar(rng, f))
			}
		case f.IsMap():
			mp := m.Mutable(f).Map()
			for range rng.IntN(4) {
				k := scalar(rng, f.MapKey()).MapKey()
				if f.MapValue().Kind() == protoreflect.MessageKind {
					v := mp.NewValue()
					Fill(rng, v.Message(), depth-1)
					mp.Set(k, v)
					continue
				}
				mp.Set(k, scalar(rng, f.MapValue()))
			}
		case f.Kind() == protoreflect.MessageKind:
			Fill(rng, m.Mutable(f).Message(), depth-1)
		default:
			m.Set(f, scalar(rng, f))
		}
	}
}

// scalar is a random value of f's kind (not a message).
func scalar(rng *rand.Rand, f protoreflect.FieldDescriptor) protoreflect.Value {
	u := edge(rng)
	switch f.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(rng.IntN(2) == 1)
	case protoreflect.EnumKind:
		values := f.Enum().Values()
		if rng.IntN(4) == 0 {
			return protoreflect.ValueOfEnum(protoreflect.EnumNumber(int32(u)))
		}
		return protoreflect.ValueOfEnum(values.Get(rng.IntN(values.Len())).Number())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(u))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(u))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(int64(u))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(u)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(rng.NormFloat64()))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(rng.NormFloat64() * 1e6)
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(text(rng))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte(text(rng)))
	}
	panic("wirefill: field " + string(f.FullName()) + " of kind " + f.Kind().String())
}

// edge is 0, 1, a maximum, a negative number or anything, for varint
// lengths from 1 to 10 bytes.
func edge(rng *rand.Rand) uint64 {
	switch rng.IntN(6) {
	case 0:
		return 0
	case 1:
		return 1
	case 2:
		return math.MaxUint64
	case 3:
		return uint64(-rng.Int64N(1 << 40))
	case 4:
		return uint64(rng.IntN(300))
	}
	return rng.Uint64() >> rng.IntN(64)
}

// text is a short string, sometimes empty, sometimes not ASCII.
func text(rng *rand.Rand) string {
	const alphabet = "abcxyz-_/.0123456789é世"
	r := []rune(alphabet)
	b := make([]rune, rng.IntN(12))
	for i := range b {
		b[i] = r[rng.IntN(len(r))]
	}
	return string(b)
}
