package protocol

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

type defLeader struct {
	ID    int32 `kafka:"v0+,default=-1"`
	Epoch int32 `kafka:"v0+,default=-1"`
}

// defOuter nests a struct with defaults inside another, and carries a slice,
// which makes it incomparable.
type defOuter struct {
	Leader defLeader `kafka:"v0+"`
	Size   int64     `kafka:"v0+,default=0x7fffffff"`
	Names  []string  `kafka:"v0+"`
}

type defMessage struct {
	A      int32     `kafka:"v0+"`
	Epoch  int64     `kafka:"v0+,tag=0,default=-1"`
	Leader defLeader `kafka:"v0+,tag=1"`
	Plain  int16     `kafka:"v0+,tag=2"`
	Port   uint16    `kafka:"v0+,tag=3,default=9092"`
	Outer  defOuter  `kafka:"v0+,tag=4"`
}

func encodeFlexible(t *testing.T, v any) []byte {
	t.Helper()
	rv := reflect.ValueOf(v).Elem()
	c, err := codecs.compile(rv.Type(), 0, true, false, true)
	if err != nil {
		t.Fatal(err)
	}
	s := getEncodeState()
	defer putEncodeState(s)
	n := c.size(s, rv)
	w := s.writer(nil)
	c.encode(w, rv)
	if s.err != nil || len(w.b) != n {
		t.Fatalf("encode: err %v, %d bytes for a size of %d", s.err, len(w.b), n)
	}
	return append([]byte(nil), w.b...)
}

func decodeFlexible(t *testing.T, b []byte, into any) {
	t.Helper()
	rv := reflect.ValueOf(into).Elem()
	c, err := codecs.compile(rv.Type(), 0, true, false, true)
	if err != nil {
		t.Fatal(err)
	}
	r := wireReader{b: b}
	c.decode(&r, rv)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.remaining() != 0 {
		t.Fatalf("%d bytes left after decoding", r.remaining())
	}
}

func defaultMessage() defMessage {
	return defMessage{
		A:      7,
		Epoch:  -1,
		Leader: defLeader{ID: -1, Epoch: -1},
		Port:   9092,
		Outer:  defOuter{Leader: defLeader{ID: -1, Epoch: -1}, Size: 0x7fffffff},
	}
}

func TestTaggedDefaultsLeftOut(t *testing.T) {
	m := defaultMessage()
	got := encodeFlexible(t, &m)
	want := mustHex(t, `00000007 00`)
	if !bytes.Equal(got, want) {
		t.Fatalf("fields at their defaults: got %x, want %x", got, want)
	}
	// An empty tag section gives every tagged field its default, whatever
	// the value held before.
	dec := defMessage{Epoch: 5, Leader: defLeader{ID: 3}, Plain: 4, Port: 1, Outer: defOuter{Names: []string{"x"}}}
	decodeFlexible(t, want, &dec)
	if !reflect.DeepEqual(dec, m) {
		t.Fatalf("absent tagged fields decoded as %+v, want %+v", dec, m)
	}
}

func TestTaggedZeroIsSentWhenDefaultIsNot(t *testing.T) {
	m := defMessage{A: 7}
	got := encodeFlexible(t, &m)
	want := mustHex(t, `00000007
		04
		00 08 0000000000000000
		01 09 00000000 00000000 00
		03 02 0000
		04 13 00000000 00000000 00 0000000000000000 01 00`)
	if !bytes.Equal(got, want) {
		t.Fatalf("zero fields with non-zero defaults:\ngot  %x\nwant %x", got, want)
	}
	var dec defMessage
	dec.Epoch = 99
	decodeFlexible(t, got, &dec)
	// The decoded Names is an empty slice where m has nil.
	m.Outer.Names = []string{}
	if !reflect.DeepEqual(dec, m) {
		t.Fatalf("decoded %+v, want %+v", dec, m)
	}
}

func TestTaggedDefaultsPartlySet(t *testing.T) {
	m := defaultMessage()
	m.Leader.Epoch = 0 // one member off its default: the struct is sent
	m.Plain = 3        // default zero
	got := encodeFlexible(t, &m)
	want := mustHex(t, `00000007 02
		01 09 ffffffff 00000000 00
		02 02 0003`)
	if !bytes.Equal(got, want) {
		t.Fatalf("got  %x\nwant %x", got, want)
	}
	var dec defMessage
	decodeFlexible(t, got, &dec)
	if !reflect.DeepEqual(dec, m) {
		t.Fatalf("decoded %+v, want %+v", dec, m)
	}
}

func TestDefaultOptionErrors(t *testing.T) {
	type onString struct {
		S string `kafka:"v0+,tag=0,default=1"`
	}
	type overflow struct {
		N int8 `kafka:"v0+,tag=0,default=200"`
	}
	type negativeUnsigned struct {
		N uint16 `kafka:"v0+,tag=0,default=-1"`
	}
	type notANumber struct {
		N int32 `kafka:"v0+,tag=0,default=x"`
	}
	type onStruct struct {
		L defLeader `kafka:"v0+,tag=0,default=-1"`
	}
	type innerBad struct {
		N int8 `kafka:"v0+,default=-129"`
	}
	type viaInner struct {
		I innerBad `kafka:"v0+,tag=0"`
	}
	for _, v := range []any{onString{}, overflow{}, negativeUnsigned{}, notANumber{}, onStruct{}, viaInner{}} {
		_, err := codecs.compile(reflect.TypeOf(v), 0, true, false, true)
		if err == nil || !strings.Contains(err.Error(), "default") {
			t.Errorf("%T: error %v, want one about the default", v, err)
		}
	}
}

func TestParseDefault(t *testing.T) {
	for tag, want := range map[string]int64{
		"v0+,default=-1":         -1,
		"v0+,default=0x7fffffff": 0x7fffffff,
		"default=12,v1+,tag=3":   12,
	} {
		ft, on, err := parseFieldTag(tag, true)
		if err != nil || !on || !ft.hasDef || ft.def != want {
			t.Errorf("%q: %+v %v %v", tag, ft, on, err)
		}
	}
}

// A struct whose members all default to zero keeps the zero value as its
// default, like a struct without any default= option.
func TestTaggedStructZeroDefault(t *testing.T) {
	type zeroDefaults struct {
		N int32 `kafka:"v0+,default=0"`
	}
	type msg struct {
		Z zeroDefaults `kafka:"v0+,tag=0"`
	}
	if got := encodeFlexible(t, &msg{}); !bytes.Equal(got, []byte{0}) {
		t.Fatalf("got %x", got)
	}
	got := encodeFlexible(t, &msg{Z: zeroDefaults{N: -1}})
	if want := mustHex(t, `01 00 05 ffffffff 00`); !bytes.Equal(got, want) {
		t.Fatalf("got %x, want %x", got, want)
	}
}
