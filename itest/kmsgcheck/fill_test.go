package kmsgcheck

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"reflect"
	"strings"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fillMode selects how a kmsg message is populated.
type fillMode int

const (
	// fillAll sets every field, at every depth, to a non-zero value that
	// differs from the other fields, with two elements in every array. kmsg
	// writes only the fields of the version under test.
	fillAll fillMode = iota
	// fillDefaults leaves the message as kmsg's constructor makes it: the
	// spec's defaults, null for nullable strings, bytes and arrays.
	fillDefaults
	// fillSparse gives every array one element holding the spec's defaults,
	// so that the null and default forms of nested fields are exercised too.
	fillSparse
	// fillZeroTags is fillAll with the tagged fields listed in zeroTagged set
	// to zero: fields whose spec default is not zero, so that kmsg (as the
	// Java broker) writes them, a zero being a real value for them.
	fillZeroTags
	// fillEmpty makes the message's arrays and byte sequences empty but not
	// null (so no nested struct is reached), and leaves the rest at the
	// spec's defaults.
	fillEmpty
	// fillEmptyLeaves gives arrays of structs one element (with the spec's
	// defaults) and makes every other array, byte sequence and record set
	// empty but not null.
	fillEmptyLeaves
	// fillUnknownTags is fillAll plus, in flexible versions, an unknown
	// tagged field in every struct: our codec must skip them when decoding
	// (and, not knowing them, it does not write them back).
	fillUnknownTags
	// fillLarge is fillAll with negative numbers, strings and bytes longer
	// than 127 bytes and arrays of numbers or strings of 130 elements, so
	// that compact lengths take two bytes; in flexible versions every
	// struct also gets an unknown tagged field of 200 bytes.
	fillLarge
)

func (m fillMode) String() string {
	switch m {
	case fillAll:
		return ""
	case fillDefaults:
		return "/defaults"
	case fillSparse:
		return "/sparse"
	case fillZeroTags:
		return "/zerotags"
	case fillEmpty:
		return "/empty"
	case fillEmptyLeaves:
		return "/emptyleaves"
	case fillUnknownTags:
		return "/unknowntags"
	default:
		return "/large"
	}
}

var (
	tagsType    = reflect.TypeOf(kmsg.Tags{})
	defaulterIf = reflect.TypeOf((*interface{ Default() })(nil)).Elem()
)

// recordsFields names the byte fields of kmsg structs that carry record
// batches: they must hold a valid batch, which the project's codec parses.
var recordsFields = map[reflect.Type]string{
	reflect.TypeOf(kmsg.ProduceRequestTopicPartition{}): "Records",
	reflect.TypeOf(kmsg.FetchResponseTopicPartition{}):  "RecordBatches",
}

// taggedSince gives the first version of kmsg's tagged fields that appear
// after the first flexible version of their message (from the spec's
// taggedVersions; HighWatermark comes from a spec newer than ours). kmsg
// writes a tagged field at every flexible version as
// soon as it differs from its default, where the spec and the Java broker
// (and our codec) only know it from this version on: the filler leaves
// these fields at their defaults below it.
var taggedSince = map[reflect.Type]map[string]int16{
	reflect.TypeOf(kmsg.ProduceResponse{}):               {"Brokers": 10},
	reflect.TypeOf(kmsg.ProduceResponseTopicPartition{}): {"CurrentLeader": 10},
	reflect.TypeOf(kmsg.FetchRequest{}):                  {"ReplicaState": 15},
	reflect.TypeOf(kmsg.FetchRequestTopicPartition{}):    {"ReplicaDirectoryID": 17, "HighWatermark": 18},
	reflect.TypeOf(kmsg.FetchResponse{}):                 {"Brokers": 16},
}

// zeroTagged lists, for the fillZeroTags mode, the tagged fields in our
// version ranges whose spec default is not zero (-1 for all of them).
var zeroTagged = []struct {
	key      protocol.ApiKey
	response bool
	since    int16
	typ      reflect.Type
	fields   []string
}{
	{protocol.Produce, true, 10, reflect.TypeOf(kmsg.ProduceResponseTopicPartition{}), []string{"CurrentLeader"}},
	{protocol.Fetch, true, 12, reflect.TypeOf(kmsg.FetchResponseTopicPartition{}), []string{"DivergingEpoch", "CurrentLeader", "SnapshotID"}},
	{protocol.ApiVersions, true, 3, reflect.TypeOf(kmsg.ApiVersionsResponse{}), []string{"FinalizedFeaturesEpoch"}},
}

// hasZeroTagged tells whether the fillZeroTags mode applies to a message.
func hasZeroTagged(key protocol.ApiKey, response bool, v int16) bool {
	for _, z := range zeroTagged {
		if z.key == key && z.response == response && v >= z.since {
			return true
		}
	}
	return false
}

// filler populates kmsg messages by reflection.
type filler struct {
	mode    fillMode
	version int16
	n       int
	legacy  bool // records are magic 1 message sets rather than v2 batches
}

func (f *filler) next() int {
	f.n++
	return f.n
}

// fillMessage populates msg (a pointer to a kmsg request or response struct)
// but not its Version field, which the caller sets.
func (f *filler) fillMessage(msg any) {
	v := reflect.ValueOf(msg).Elem()
	if f.mode == fillDefaults {
		return
	}
	f.fillStruct(v, true)
	switch f.mode {
	case fillUnknownTags:
		addUnknownTags(v, true)
	case fillLarge:
		addTags(v, true, true)
	}
}

func (f *filler) fillStruct(v reflect.Value, top bool) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() || sf.Type == tagsType || (top && sf.Name == "Version") {
			continue
		}
		if since, ok := taggedSince[t][sf.Name]; ok && f.version < since {
			continue
		}
		fv := v.Field(i)
		if name, ok := recordsFields[t]; ok && name == sf.Name {
			switch f.mode {
			case fillAll, fillZeroTags, fillUnknownTags, fillLarge:
				fv.SetBytes(f.records())
			case fillEmpty, fillEmptyLeaves:
				fv.SetBytes([]byte{})
			}
			continue
		}
		f.fillValue(fv)
	}
	if f.mode == fillZeroTags {
		for _, z := range zeroTagged {
			if z.typ != t {
				continue
			}
			for _, name := range z.fields {
				fv := v.FieldByName(name)
				zeroScalars(fv)
			}
		}
	}
}

// zeroScalars sets the numbers of v (a struct or a number) to zero and
// leaves its unknown tags alone.
func zeroScalars(v reflect.Value) {
	if v.Kind() != reflect.Struct {
		v.SetZero()
		return
	}
	for i := 0; i < v.NumField(); i++ {
		if v.Type().Field(i).IsExported() && v.Field(i).Type() != tagsType {
			zeroScalars(v.Field(i))
		}
	}
}

func (f *filler) fillValue(v reflect.Value) {
	switch f.mode {
	case fillSparse:
		f.sparseValue(v)
		return
	case fillEmpty, fillEmptyLeaves:
		f.emptyValue(v)
		return
	}
	n := f.next()
	if f.mode == fillLarge && f.largeValue(v, n) {
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int8:
		v.SetInt(int64(n%100 + 1))
	case reflect.Int16:
		v.SetInt(int64(n%30000 + 100))
	case reflect.Int32:
		v.SetInt(int64(n + 1000))
	case reflect.Int64:
		v.SetInt(int64(n) + 1<<40)
	case reflect.Uint16:
		v.SetUint(uint64(n%60000 + 200))
	case reflect.Uint32:
		v.SetUint(uint64(n + 3000))
	case reflect.Float64:
		v.SetFloat(float64(n) + 0.25)
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", n))
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if p.Elem().Kind() == reflect.String {
			p.Elem().SetString(fmt.Sprintf("p%d", n))
		} else {
			f.fillValue(p.Elem())
		}
		v.Set(p)
	case reflect.Array: // UUIDs
		for i := 0; i < v.Len(); i++ {
			v.Index(i).SetUint(uint64(n + i*7 + 1))
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte(fmt.Sprintf("b%d", n)))
			return
		}
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := 0; i < 2; i++ {
			f.fillElem(s.Index(i))
		}
		v.Set(s)
	case reflect.Struct:
		f.fillStruct(v, false)
	default:
		panic(fmt.Sprintf("kmsgcheck filler: unhandled kind %s (%s)", v.Kind(), v.Type()))
	}
}

// fillElem fills an array element, starting from kmsg's defaults for
// struct elements so that fields the filler leaves alone (unknown tags)
// are in their normal state.
func (f *filler) fillElem(e reflect.Value) {
	if e.Kind() == reflect.Struct && e.Addr().Type().Implements(defaulterIf) {
		e.Addr().Interface().(interface{ Default() }).Default()
	}
	if e.Kind() == reflect.Struct {
		f.fillStruct(e, false)
		return
	}
	f.fillValue(e)
}

// largeValue sets v for fillLarge, or returns false to let fillValue do
// it.
func (f *filler) largeValue(v reflect.Value, n int) bool {
	long := func(prefix string) string {
		return prefix + strings.Repeat(fmt.Sprintf("<%d>", n), 250/len(fmt.Sprint(n)))[:250]
	}
	switch v.Kind() {
	case reflect.Int16:
		v.SetInt(-int64(n%30000 + 100))
	case reflect.Int32:
		v.SetInt(-int64(n + 1000))
	case reflect.Int64:
		v.SetInt(-(int64(n) + 1<<40))
	case reflect.String:
		v.SetString(long("s"))
	case reflect.Pointer:
		if v.Type().Elem().Kind() != reflect.String {
			return false
		}
		s := long("p")
		v.Set(reflect.ValueOf(&s))
	case reflect.Slice:
		switch v.Type().Elem().Kind() {
		case reflect.Uint8:
			v.SetBytes([]byte(long("b")))
		case reflect.Struct:
			return false
		default:
			s := reflect.MakeSlice(v.Type(), 130, 130)
			for i := 0; i < 130; i++ {
				f.fillValue(s.Index(i))
			}
			v.Set(s)
		}
	default:
		return false
	}
	return true
}

// emptyValue makes arrays and byte sequences empty, not null, and recurses
// into inline structs.
func (f *filler) emptyValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		f.fillStruct(v, false)
	case reflect.Slice:
		if f.mode == fillEmptyLeaves && v.Type().Elem().Kind() == reflect.Struct {
			s := reflect.MakeSlice(v.Type(), 1, 1)
			e := s.Index(0)
			if e.Addr().Type().Implements(defaulterIf) {
				e.Addr().Interface().(interface{ Default() }).Default()
			}
			f.fillStruct(e, false)
			v.Set(s)
			return
		}
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
	}
}

// addUnknownTags gives every struct in v (a kmsg message) an unknown tagged
// field, or removes them all when add is false.
func addUnknownTags(v reflect.Value, add bool) {
	addTags(v, add, false)
}

func addTags(v reflect.Value, add, large bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			addTags(v.Elem(), add, large)
		}
	case reflect.Slice:
		for i := 0; i < v.Len(); i++ {
			addTags(v.Index(i), add, large)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			fv := v.Field(i)
			if !v.Type().Field(i).IsExported() {
				continue
			}
			if fv.Type() == tagsType {
				var tags kmsg.Tags
				if add {
					// Tag numbers no message of ours uses; a struct value
					// and an empty one, to skip both kinds.
					tags.Set(77, []byte{0, 0, 0, 42, 2, 'x', 0})
					tags.Set(4000, nil)
					if large {
						tags.Set(5000, bytes.Repeat([]byte{0xa5}, 200))
					}
				}
				fv.Set(reflect.ValueOf(tags))
				continue
			}
			addTags(fv, add, large)
		}
	}
}

// sparseValue gives arrays one default element and recurses into structs,
// leaving everything else at its default.
func (f *filler) sparseValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		f.fillStruct(v, false)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		s := reflect.MakeSlice(v.Type(), 1, 1)
		e := s.Index(0)
		if e.Kind() == reflect.Struct {
			if e.Addr().Type().Implements(defaulterIf) {
				e.Addr().Interface().(interface{ Default() }).Default()
			}
			f.fillStruct(e, false)
		}
		v.Set(s)
	}
}

// firstTimestamp is the timestamp of the first record of every batch: the
// project's writer stamps records with a zero time with the current time,
// so the records must carry a real one to round trip.
const firstTimestamp = 1_700_000_000_000

// records returns record batches in the form the project's writer
// produces, so that decoding and re-encoding them is the identity: one
// uncompressed batch, offsets from 0, no producer id, epoch or sequence.
func (f *filler) records() []byte {
	n := f.next()
	if f.legacy {
		return legacyMessageSet(n)
	}
	return recordBatchV2(n)
}

func recordBatchV2(n int) []byte {
	recs := []kmsg.Record{
		{
			TimestampDelta64: 0,
			OffsetDelta:      0,
			Key:              []byte(fmt.Sprintf("key-%d", n)),
			Value:            []byte(fmt.Sprintf("value-%d", n)),
			Headers: []kmsg.Header{
				{Key: "h1", Value: []byte("v1")},
				{Key: "h2", Value: nil},
			},
		},
		{
			TimestampDelta64: 5,
			OffsetDelta:      1,
			Key:              nil,
			Value:            []byte(fmt.Sprintf("second-%d", n)),
		},
		{
			TimestampDelta64: 3,
			OffsetDelta:      2,
			Key:              []byte{},
			Value:            nil,
		},
	}
	var body []byte
	for i := range recs {
		r := &recs[i]
		r.Length = int32(len(r.AppendTo(nil)) - 1) // Length 0 takes one byte
		body = r.AppendTo(body)
	}
	b := kmsg.RecordBatch{
		FirstOffset:          0,
		PartitionLeaderEpoch: -1,
		Magic:                2,
		Attributes:           0,
		LastOffsetDelta:      int32(len(recs) - 1),
		FirstTimestamp:       firstTimestamp,
		MaxTimestamp:         firstTimestamp + 5,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		FirstSequence:        -1,
		NumRecords:           int32(len(recs)),
		Records:              body,
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

func legacyMessageSet(n int) []byte {
	msgs := []kmsg.MessageV1{
		{Offset: 0, Magic: 1, Timestamp: firstTimestamp, Key: []byte(fmt.Sprintf("key-%d", n)), Value: []byte(fmt.Sprintf("value-%d", n))},
		{Offset: 1, Magic: 1, Timestamp: firstTimestamp + 7, Key: nil, Value: []byte(fmt.Sprintf("second-%d", n))},
	}
	var out []byte
	for i := range msgs {
		m := msgs[i].AppendTo(nil)
		binary.BigEndian.PutUint32(m[8:], uint32(len(m)-12))
		binary.BigEndian.PutUint32(m[12:], crc32.ChecksumIEEE(m[16:]))
		out = append(out, m...)
	}
	return out
}
