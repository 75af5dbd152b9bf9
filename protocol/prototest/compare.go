package prototest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"time"

	"github.com/segmentio/kafka-go/protocol"
)

var (
	timeType  = reflect.TypeOf(time.Time{})
	bytesType = reflect.TypeOf((*protocol.Bytes)(nil)).Elem()
)

// compare returns "" when want and got hold the same data, else a
// description of the first difference. The notion of "same" is the wire's:
// nil and empty slices are the same, record readers are compared by the
// records they yield, byte readers by their content, times by instant.
func compare(want, got interface{}) string {
	return compareValues("msg", reflect.ValueOf(want), reflect.ValueOf(got))
}

func compareValues(path string, a, b reflect.Value) string {
	if !a.IsValid() || !b.IsValid() {
		if a.IsValid() != b.IsValid() {
			return fmt.Sprintf("%s: one side is missing", path)
		}
		return ""
	}
	if a.Type() != b.Type() {
		return fmt.Sprintf("%s: type %s != %s", path, a.Type(), b.Type())
	}
	switch {
	case a.Type() == timeType:
		if ta, tb := a.Interface().(time.Time), b.Interface().(time.Time); !ta.Equal(tb) {
			return fmt.Sprintf("%s: %v != %v", path, ta, tb)
		}
		return ""
	case a.Kind() == reflect.Interface:
		return compareInterfaces(path, a, b)
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return fmt.Sprintf("%s: nil vs non-nil pointer", path)
			}
			return ""
		}
		return compareValues(path, a.Elem(), b.Elem())
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			f := a.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			if d := compareValues(path+"."+f.Name, a.Field(i), b.Field(i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice:
		if a.Type().Elem().Kind() == reflect.Uint8 {
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				return fmt.Sprintf("%s: %q != %q", path, a.Bytes(), b.Bytes())
			}
			return ""
		}
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: length %d != %d", path, a.Len(), b.Len())
		}
		for i := 0; i < a.Len(); i++ {
			if d := compareValues(fmt.Sprintf("%s[%d]", path, i), a.Index(i), b.Index(i)); d != "" {
				return d
			}
		}
		return ""
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			return fmt.Sprintf("%s: %#v != %#v", path, a.Interface(), b.Interface())
		}
		return ""
	}
}

func compareInterfaces(path string, a, b reflect.Value) string {
	t := a.Type()
	switch {
	case t.Implements(recordReaderType):
		var ra, rb []memRecord
		var err error
		if !a.IsNil() {
			if ra, err = drainRecords(a.Interface().(protocol.RecordReader)); err != nil {
				return fmt.Sprintf("%s: reading the expected records: %v", path, err)
			}
		}
		if !b.IsNil() {
			if rb, err = drainRecords(b.Interface().(protocol.RecordReader)); err != nil {
				return fmt.Sprintf("%s: reading the decoded records: %v", path, err)
			}
		}
		return compareRecords(path, ra, rb)
	case t == bytesType:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return fmt.Sprintf("%s: null vs non-null bytes", path)
			}
			return ""
		}
		return compareValues(path, reflect.ValueOf(readBytes(a.Interface().(protocol.Bytes))),
			reflect.ValueOf(readBytes(b.Interface().(protocol.Bytes))))
	case t.Implements(readerType):
		var da, db []byte
		if !a.IsNil() {
			da, _ = io.ReadAll(a.Interface().(io.Reader))
		}
		if !b.IsNil() {
			db, _ = io.ReadAll(b.Interface().(io.Reader))
		}
		if !bytes.Equal(da, db) {
			return fmt.Sprintf("%s: reader content %x != %x", path, da, db)
		}
		return ""
	}
	if a.IsNil() || b.IsNil() {
		if a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: nil vs non-nil", path)
		}
		return ""
	}
	return compareValues(path, a.Elem(), b.Elem())
}

func compareRecords(path string, a, b []memRecord) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%s: %d records != %d records", path, len(a), len(b))
	}
	for i := range a {
		p := fmt.Sprintf("%s.record[%d]", path, i)
		ra, rb := &a[i], &b[i]
		switch {
		case ra.offset != rb.offset:
			return fmt.Sprintf("%s: offset %d != %d", p, ra.offset, rb.offset)
		case !ra.time.Equal(rb.time):
			return fmt.Sprintf("%s: time %v != %v", p, ra.time, rb.time)
		case (ra.key == nil) != (rb.key == nil) || !bytes.Equal(ra.key, rb.key):
			return fmt.Sprintf("%s: key %q != %q", p, ra.key, rb.key)
		case (ra.value == nil) != (rb.value == nil) || !bytes.Equal(ra.value, rb.value):
			return fmt.Sprintf("%s: value %q != %q", p, ra.value, rb.value)
		}
		if d := compareValues(p+".Headers", reflect.ValueOf(ra.headers), reflect.ValueOf(rb.headers)); d != "" {
			return d
		}
	}
	return ""
}

// drainRecords reads every record of r into memory.
func drainRecords(r protocol.RecordReader) ([]memRecord, error) {
	var out []memRecord
	for {
		rec, err := r.ReadRecord()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		out = append(out, memRecord{
			offset:  rec.Offset,
			time:    rec.Time,
			key:     readBytes(rec.Key),
			value:   readBytes(rec.Value),
			headers: rec.Headers,
		})
	}
}
