package protocol_test

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/prototest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryMessageRoundTrips writes every registered request and response
// type at every version it supports, with every field that version puts on
// the wire set to a non-zero value, reads it back and compares all exported
// fields (prototest). A field the decoder does not fill, or fills somewhere
// else (a mirror of another field), fails here. Override request types
// (RegisterOverride) decode as their API's regular type, so for them the
// check is that both encodings give the same bytes.
//
// A field that no version puts on the wire cannot come back from it, so a
// mirror of a wire field (as describeacls.Request.Filter once was) would
// pass the comparison unseen. Such fields are therefore listed here, each
// with the reason it exists; a new one fails the test until it is added.
func TestEveryMessageRoundTrips(t *testing.T) {
	offWireAllowed := map[string]string{
		"listgroups.ResponseGroup.BrokerID": "the broker that listed the group, set by Merge from the request it answered, as upstream does",
	}
	offWire := map[string]bool{}
	types := protocol.RegisteredTypesForTest()
	require.NotEmpty(t, types)
	apis, overrides := map[protocol.ApiKey]bool{}, 0
	for _, rt := range types {
		if rt.Key >= 1000 {
			continue // test-only messages of the internal tests, checked there
		}
		apis[rt.Key] = true
		if rt.Override {
			overrides++
		}
		kind := "response"
		if rt.Request {
			kind = "request"
		}
		if rt.Override {
			kind = "override"
		}
		t.Run(fmt.Sprintf("%s/%s", rt.Key, kind), func(t *testing.T) {
			for v := rt.Min; v <= rt.Max; v++ {
				msg := rt.New()
				g := &generator{t: t, key: rt.Key, version: v, flexible: rt.Flexible(v), offWire: offWire}
				g.fillStruct(reflect.ValueOf(msg).Elem())
				switch {
				case rt.Override:
					prototest.TestRequestWithOverride(t, v, msg)
				case rt.Request:
					prototest.TestRequest(t, v, msg)
				default:
					prototest.TestResponse(t, v, msg)
				}
			}
		})
	}
	// The 42 sub-packages of imports_test.go: 40 APIs, plus rawproduce
	// (Produce's override) and consumer (no API of its own).
	require.Len(t, apis, 40, "registered APIs")
	require.Equal(t, 1, overrides, "override request types")
	for name := range offWire {
		assert.Contains(t, offWireAllowed, name, "exported field on the wire at no version")
	}
}

var bytesType = reflect.TypeOf((*protocol.Bytes)(nil)).Elem()

// generator fills a message with values valid at one version: only the
// fields that version carries, tagged fields only when it is flexible and
// never at their default (which would leave them off the wire), each
// scalar a different non-zero number so that two fields swapped by the
// codec show too.
type generator struct {
	t        *testing.T
	key      protocol.ApiKey
	version  int16
	flexible bool
	n        int64
	offWire  map[string]bool // exported fields of no version, by type.field
}

func (g *generator) next() int64 {
	g.n++
	return g.n
}

func (g *generator) fillStruct(v reflect.Value) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if protocol.IsInlineStructForTest(f) {
			g.fillStruct(v.Field(i))
			continue
		}
		if f.Name == "_" || !f.IsExported() {
			continue
		}
		ft, err := protocol.ParseFieldTagForTest(f)
		require.NoError(g.t, err, "%s.%s", t, f.Name)
		if ft.NeverOnWire() {
			g.offWire[t.String()+"."+f.Name] = true
			continue
		}
		if !ft.On || !ft.Has(g.version) || (ft.Tag >= 0 && !g.flexible) {
			continue
		}
		g.fill(v.Field(i), ft)
	}
}

func (g *generator) fill(v reflect.Value, ft protocol.FieldTagForTest) {
	t := v.Type()
	if protocol.IsRecordsTypeForTest(t) {
		g.fillRecords(v)
		return
	}
	switch t.Kind() {
	case reflect.Bool:
		v.SetBool(!(ft.HasDef && ft.Def != 0))
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := g.next()%100 + 1 // fits every width
		if ft.HasDef && n == ft.Def {
			n = g.next()%100 + 1
		}
		v.SetInt(n)
	case reflect.Uint16, reflect.Uint32:
		v.SetUint(uint64(g.next()))
	case reflect.Float64:
		v.SetFloat(float64(g.next()) + 0.5)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", g.next()))
	case reflect.Array:
		require.Equal(g.t, 16, t.Len(), "%s: only UUIDs are arrays", t)
		n := g.next()
		for i := 0; i < 16; i++ {
			v.Index(i).SetUint(uint64(n) + uint64(i))
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte(fmt.Sprintf("b%d", g.next())))
			return
		}
		s := reflect.MakeSlice(t, 2, 2)
		for i := 0; i < 2; i++ {
			// Array elements are never nullable nor tagged themselves.
			g.fill(s.Index(i), protocol.FieldTagForTest{On: true, Tag: -1})
		}
		v.Set(s)
	case reflect.Struct:
		g.fillStruct(v)
	case reflect.Pointer:
		p := reflect.New(t.Elem())
		g.fillStruct(p.Elem())
		v.Set(p)
	case reflect.Interface:
		require.Equal(g.t, bytesType, t, "no generator for %s", t)
		v.Set(reflect.ValueOf(protocol.NewBytes([]byte(fmt.Sprintf("b%d", g.next())))))
	default:
		g.t.Fatalf("no generator for %s", t)
	}
}

// fillRecords puts two records in a record set of the message format the
// API version carries: v2 batches from Produce v3 and Fetch v4 on, legacy
// message sets before. Those are magic 1 (with timestamps, without
// headers): like upstream, the package never writes magic 0.
func (g *generator) fillRecords(v reflect.Value) {
	version := int8(1)
	switch g.key {
	case protocol.Produce:
		if g.version >= 3 {
			version = 2
		}
	case protocol.Fetch:
		if g.version >= 4 {
			version = 2
		}
	default:
		g.t.Fatalf("%s v%d: a record set in an API the generator does not know", g.key, g.version)
	}
	base := time.UnixMilli(1700000000000 + g.next())
	recs := make([]protocol.Record, 2)
	for i := range recs {
		recs[i] = protocol.Record{
			Offset: int64(i),
			Key:    protocol.NewBytes([]byte(fmt.Sprintf("k%d", g.next()))),
			Value:  protocol.NewBytes([]byte(fmt.Sprintf("v%d", g.next()))),
		}
		recs[i].Time = base.Add(time.Duration(i) * time.Millisecond)
		if version >= 2 {
			recs[i].Headers = []protocol.Header{{Key: fmt.Sprintf("h%d", g.next()), Value: []byte("x")}}
		}
	}
	set := protocol.RecordSet{Version: version, Records: protocol.NewRecordReader(recs...)}
	switch v.Interface().(type) {
	case protocol.RecordSet:
		v.Set(reflect.ValueOf(set))
	case protocol.RawRecordSet:
		var buf bytes.Buffer
		_, err := set.WriteTo(&buf)
		require.NoError(g.t, err)
		v.Set(reflect.ValueOf(protocol.RawRecordSet{Reader: &buf}))
	default:
		g.t.Fatalf("no generator for the record set type %s", v.Type())
	}
}
