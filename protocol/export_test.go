package protocol

import (
	"reflect"
	"sort"
)

// This file lends the external tests of this package (protocol_test, which
// can import the API sub-packages) what they need to walk every registered
// message type the way the codec does.

// RegisteredTypeForTest is one registered request or response type.
type RegisteredTypeForTest struct {
	Key      ApiKey
	Request  bool
	Override bool // registered with RegisterOverride
	Min, Max int16
	flexFrom int16
	typ      reflect.Type
}

// Flexible reports whether version v uses the flexible encoding.
func (r RegisteredTypeForTest) Flexible(v int16) bool { return v >= r.flexFrom }

// New returns a new zero message of the type.
func (r RegisteredTypeForTest) New() Message { return reflect.New(r.typ).Interface().(Message) }

// RegisteredTypesForTest lists every registered type, in API key order.
func RegisteredTypesForTest() []RegisteredTypeForTest {
	var out []RegisteredTypeForTest
	add := func(mt *msgType, req, override bool) {
		out = append(out, RegisteredTypeForTest{Key: mt.key, Request: req, Override: override,
			Min: mt.min, Max: mt.max, flexFrom: mt.flexFrom, typ: mt.typ})
	}
	s := currentRegistry()
	for _, types := range s.apis {
		add(types.req, true, false)
		add(types.res, false, false)
	}
	for _, types := range s.overrides {
		add(types.req, true, true)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Key != b.Key {
			return a.Key < b.Key
		}
		if a.Request != b.Request {
			return a.Request
		}
		return !a.Override && b.Override
	})
	return out
}

// FieldTagForTest is a field's parsed kafka tag.
type FieldTagForTest struct {
	On       bool // false for kafka:"-"
	Tag      int  // -1 unless a tagged field
	Def      int64
	HasDef   bool
	versions vrange
	nullable vrange
}

func (f FieldTagForTest) Has(v int16) bool      { return f.versions.has(v) }
func (f FieldTagForTest) NeverOnWire() bool     { return !f.On || f.versions.hi < 0 }
func (f FieldTagForTest) Nullable(v int16) bool { return f.nullable.has(v) }

// ParseFieldTagForTest parses the kafka tag of f as the codec does.
func ParseFieldTagForTest(f reflect.StructField) (FieldTagForTest, error) {
	raw, hasTag := f.Tag.Lookup("kafka")
	ft, on, err := parseFieldTag(raw, hasTag)
	return FieldTagForTest{On: on, Tag: ft.tagID, Def: ft.def, HasDef: ft.hasDef,
		versions: ft.versions, nullable: ft.nullable}, err
}

// IsInlineStructForTest reports whether the codec puts f's fields directly
// in the struct that holds it.
func IsInlineStructForTest(f reflect.StructField) bool { return isInlineStruct(f) }

// IsRecordsTypeForTest reports whether t is encoded as a record set.
func IsRecordsTypeForTest(t reflect.Type) bool { return isRecordsType(t) }
