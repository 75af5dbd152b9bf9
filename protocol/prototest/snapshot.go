package prototest

import (
	"bytes"
	"io"
	"reflect"
	"time"

	"github.com/segmentio/kafka-go/protocol"
)

var (
	recordReaderType = reflect.TypeOf((*protocol.RecordReader)(nil)).Elem()
	readerType       = reflect.TypeOf((*io.Reader)(nil)).Elem()
)

// memRecord is a record held in memory, from which any number of fresh
// protocol.Records can be made (their Key and Value can be read only once).
type memRecord struct {
	offset     int64
	time       time.Time
	key, value []byte
	headers    []protocol.Header
}

func (m *memRecord) record() *protocol.Record {
	return &protocol.Record{
		Offset:  m.offset,
		Time:    m.time,
		Key:     protocol.NewBytes(m.key),
		Value:   protocol.NewBytes(m.value),
		Headers: m.headers,
	}
}

// memRecords is a RecordReader over memRecords.
type memRecords struct {
	records []memRecord
	next    int
}

func (r *memRecords) ReadRecord() (*protocol.Record, error) {
	if r.next >= len(r.records) {
		return nil, io.EOF
	}
	r.next++
	return r.records[r.next-1].record(), nil
}

func readBytes(b protocol.Bytes) []byte {
	if b == nil {
		return nil
	}
	defer b.Close()
	data, err := protocol.ReadAll(b)
	if err != nil {
		panic("prototest: reading record bytes: " + err.Error())
	}
	if data == nil {
		data = []byte{}
	}
	return data
}

// snapshotState remembers the content of every one-shot reader in a
// message (record readers, raw byte readers) so that it can be put back
// after writing the message consumed it.
type snapshotState struct {
	restores []func()
}

func (s *snapshotState) restore() {
	for _, f := range s.restores {
		f()
	}
}

func snapshot(msg protocol.Message) *snapshotState {
	s := &snapshotState{}
	s.walk(reflect.ValueOf(msg))
	return s
}

func (s *snapshotState) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			s.walk(v.Elem())
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				s.walk(v.Field(i))
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return
		}
		for i := 0; i < v.Len(); i++ {
			s.walk(v.Index(i))
		}
	case reflect.Interface:
		if v.IsNil() || !v.CanSet() {
			return
		}
		field := v
		switch x := v.Interface().(type) {
		case protocol.RecordReader:
			records, err := drainRecords(x)
			if err != nil {
				panic("prototest: reading the records of the message: " + err.Error())
			}
			s.restores = append(s.restores, func() {
				field.Set(reflect.ValueOf(&memRecords{records: records}))
			})
		case io.Reader:
			data, err := io.ReadAll(x)
			if err != nil {
				panic("prototest: reading a reader of the message: " + err.Error())
			}
			s.restores = append(s.restores, func() {
				// protocol.Bytes fields need a Bytes, plain readers
				// take any reader.
				var fresh interface{} = bytes.NewReader(data)
				if field.Type() == bytesType {
					fresh = protocol.NewBytes(data)
				}
				field.Set(reflect.ValueOf(fresh))
			})
		}
	}
}

// release closes the record bytes of a decoded message, which lets the
// record set recycle its buffers.
func release(msg protocol.Message) {
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		case reflect.Slice:
			if v.Type().Elem().Kind() != reflect.Uint8 {
				for i := 0; i < v.Len(); i++ {
					walk(v.Index(i))
				}
			}
		case reflect.Interface:
			if rr, ok := v.Interface().(protocol.RecordReader); ok && rr != nil {
				for {
					rec, err := rr.ReadRecord()
					if err != nil {
						return
					}
					if rec.Key != nil {
						rec.Key.Close()
					}
					if rec.Value != nil {
						rec.Value.Close()
					}
				}
			}
		}
	}
	walk(reflect.ValueOf(msg))
}
