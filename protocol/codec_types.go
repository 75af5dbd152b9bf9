package protocol

import (
	"errors"
	"math"
	"reflect"
)

// The codecs of the wire's value types (fixed-size integers, strings,
// bytes, UUIDs, nullable structs, arrays); codec.go compiles a message's
// struct type into them.

func fixedCodec(n int, enc func(*wireWriter, reflect.Value), dec func(*wireReader, reflect.Value)) *codec {
	return &codec{
		minSize: n,
		fixed:   n,
		size:    func(*encodeState, reflect.Value) int { return n },
		encode:  enc,
		decode:  dec,
	}
}

var errStringTooLong = errors.New("kafka protocol: string longer than 32767 bytes")

func stringCodec(flexible, nullable bool) *codec {
	if flexible {
		return &codec{
			minSize: 1,
			fixed:   -1,
			size: func(_ *encodeState, v reflect.Value) int {
				n := v.Len()
				if n == 0 && nullable {
					return 1
				}
				return wireUvarintSize(uint64(n)+1) + n
			},
			encode: func(w *wireWriter, v reflect.Value) {
				s := v.String()
				if s == "" && nullable {
					w.uvarint(0)
					return
				}
				w.uvarint(uint64(len(s)) + 1)
				w.str(s)
			},
			decode: func(r *wireReader, v reflect.Value) {
				n := r.compactLen()
				if n > 0 {
					v.SetString(string(r.take(n)))
				} else {
					v.SetString("")
				}
			},
		}
	}
	return &codec{
		minSize: 2,
		fixed:   -1,
		size: func(s *encodeState, v reflect.Value) int {
			n := v.Len()
			if n > math.MaxInt16 {
				s.fail(errStringTooLong)
			}
			return 2 + n
		},
		encode: func(w *wireWriter, v reflect.Value) {
			s := v.String()
			if s == "" && nullable {
				w.int16(-1)
				return
			}
			w.int16(int16(len(s)))
			w.str(s)
		},
		decode: func(r *wireReader, v reflect.Value) {
			n := int(r.int16())
			if n > 0 {
				v.SetString(string(r.take(n)))
			} else {
				v.SetString("")
			}
		},
	}
}

var errBytesTooLong = errors.New("kafka protocol: byte sequence longer than 2^31-1 bytes")

func bytesCodec(flexible, nullable bool) *codec {
	c := &codec{fixed: -1}
	if flexible {
		c.minSize = 1
		c.size = func(_ *encodeState, v reflect.Value) int {
			if nullable && v.IsNil() {
				return 1
			}
			n := v.Len()
			return wireUvarintSize(uint64(n)+1) + n
		}
		c.encode = func(w *wireWriter, v reflect.Value) {
			if nullable && v.IsNil() {
				w.uvarint(0)
				return
			}
			b := v.Bytes()
			w.uvarint(uint64(len(b)) + 1)
			w.raw(b)
		}
	} else {
		c.minSize = 4
		c.size = func(s *encodeState, v reflect.Value) int {
			n := v.Len()
			if n > math.MaxInt32 {
				s.fail(errBytesTooLong)
			}
			return 4 + n
		}
		c.encode = func(w *wireWriter, v reflect.Value) {
			if nullable && v.IsNil() {
				w.int32(-1)
				return
			}
			b := v.Bytes()
			w.int32(int32(len(b)))
			w.raw(b)
		}
	}
	c.decode = func(r *wireReader, v reflect.Value) {
		var n int
		if flexible {
			n = r.compactLen()
		} else {
			n = int(r.int32())
		}
		if n < 0 {
			v.SetBytes(nil)
			return
		}
		if b := r.take(n); b != nil {
			v.SetBytes(b)
		}
	}
	return c
}

func uuidCodec() *codec {
	return fixedCodec(16,
		func(w *wireWriter, v reflect.Value) {
			for i := 0; i < 16; i++ {
				w.b = append(w.b, byte(v.Index(i).Uint()))
			}
		},
		func(r *wireReader, v reflect.Value) {
			if p := r.take(16); p != nil {
				for i := 0; i < 16; i++ {
					v.Index(i).SetUint(uint64(p[i]))
				}
			}
		})
}

// nullableStructCodec handles a pointer to a struct: a nullable struct of
// the spec, an INT8 of -1 for null, or of 1 followed by the struct.
func nullableStructCodec(t reflect.Type, elem *codec) *codec {
	c := &codec{minSize: 1, fixed: -1, hasRecords: elem.hasRecords}
	c.size = func(s *encodeState, v reflect.Value) int {
		if v.IsNil() {
			return 1
		}
		return 1 + elem.size(s, v.Elem())
	}
	c.encode = func(w *wireWriter, v reflect.Value) {
		if v.IsNil() {
			w.int8(-1)
			return
		}
		w.int8(1)
		elem.encode(w, v.Elem())
	}
	c.decode = func(r *wireReader, v reflect.Value) {
		marker := r.int8()
		if r.err != nil {
			return
		}
		if marker < 0 {
			v.SetZero()
			return
		}
		p := reflect.New(t.Elem())
		elem.decode(r, p.Elem())
		v.Set(p)
	}
	return c
}

func arrayCodec(t reflect.Type, elem *codec, flexible, nullable bool) *codec {
	prefix := 4
	if flexible {
		prefix = 1
	}
	minElem := elem.minSize
	if minElem < 1 {
		// Elements that may take no bytes at all would let a tiny frame
		// claim billions of them; no real message has such arrays.
		minElem = 1
	}
	c := &codec{minSize: prefix, fixed: -1, hasRecords: elem.hasRecords}
	c.size = func(s *encodeState, v reflect.Value) int {
		n := v.Len()
		if n == 0 && nullable && v.IsNil() {
			return prefix
		}
		size := 4
		if flexible {
			size = wireUvarintSize(uint64(n) + 1)
		}
		if elem.fixed >= 0 {
			return size + n*elem.fixed
		}
		for i := 0; i < n; i++ {
			size += elem.size(s, v.Index(i))
		}
		return size
	}
	c.encode = func(w *wireWriter, v reflect.Value) {
		n := v.Len()
		switch {
		case n == 0 && nullable && v.IsNil() && flexible:
			w.uvarint(0)
			return
		case n == 0 && nullable && v.IsNil():
			w.int32(-1)
			return
		case flexible:
			w.uvarint(uint64(n) + 1)
		default:
			w.int32(int32(n))
		}
		for i := 0; i < n; i++ {
			elem.encode(w, v.Index(i))
		}
	}
	c.decode = func(r *wireReader, v reflect.Value) {
		var n int
		if flexible {
			n = r.compactLen()
		} else {
			n = int(r.int32())
		}
		if r.err != nil {
			return
		}
		if n < 0 {
			v.SetZero()
			return
		}
		if n > r.remaining()/minElem {
			r.fail(errWireShort)
			return
		}
		s := reflect.MakeSlice(t, n, n)
		for i := 0; i < n && r.err == nil; i++ {
			elem.decode(r, s.Index(i))
		}
		v.Set(s)
	}
	return c
}
