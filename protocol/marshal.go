package protocol

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
)

type marshalKey struct {
	t       reflect.Type
	version int16
}

// marshalCodecs caches the codec of each (type, version) given to Marshal
// and Unmarshal.
var marshalCodecs sync.Map // marshalKey -> *codec

// marshalCodec compiles t for Marshal/Unmarshal. Fields with a kafka tag
// exist in the versions it names; fields without one exist only at version
// -1, the version of kafka.Marshal. A struct type may carry the `_` header
// of message types, whose flexible= option then applies.
func marshalCodec(t reflect.Type, version int16) (*codec, error) {
	key := marshalKey{t: t, version: version}
	if c, ok := marshalCodecs.Load(key); ok {
		return c.(*codec), nil
	}
	flexible := false
	if t.Kind() == reflect.Struct {
		if f, ok := t.FieldByName("_"); ok {
			if tag, ok := f.Tag.Lookup("kafka"); ok {
				if h, err := parseHeaderTag(tag); err == nil {
					flexible = version >= h.flexible
				}
			}
		}
	}
	// A top-level string or byte slice is nullable, so that nil and empty
	// byte slices survive a round trip.
	c, err := codecs.compile(t, version, flexible, true, false)
	if err != nil {
		return nil, err
	}
	marshalCodecs.Store(key, c)
	return c, nil
}

// Marshal encodes value in the Kafka wire format, as of the given version
// (see kafka.Marshal and kafka.Version.Marshal).
func Marshal(version int16, value interface{}) ([]byte, error) {
	if value == nil {
		return nil, errors.New("kafka protocol: cannot marshal a nil value")
	}
	v := reflect.ValueOf(value)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem() // the value pointed to, as Unmarshal takes it
	}
	c, err := marshalCodec(v.Type(), version)
	if err != nil {
		return nil, err
	}
	state := getEncodeState()
	defer putEncodeState(state)
	n := c.size(state, v)
	if state.err != nil {
		return nil, state.err
	}
	w := state.writer(make([]byte, 0, n))
	c.encode(w, v)
	if len(w.b) != n {
		return nil, fmt.Errorf("kafka protocol: internal error marshaling %T: %d bytes written, %d expected", value, len(w.b), n)
	}
	return w.b, nil
}

// Unmarshal decodes data, in the Kafka wire format as of the given version,
// into the value value points to. Bytes left after the value are ignored, so
// that data written by a newer version of a format can be read.
func Unmarshal(data []byte, version int16, value interface{}) error {
	p := reflect.ValueOf(value)
	if p.Kind() != reflect.Pointer || p.IsNil() {
		return fmt.Errorf("kafka protocol: Unmarshal needs a non-nil pointer, not %T", value)
	}
	c, err := marshalCodec(p.Type().Elem(), version)
	if err != nil {
		return err
	}
	r := wireReader{b: data}
	c.decode(&r, p.Elem())
	return r.err
}
