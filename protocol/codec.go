package protocol

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"sort"
	"sync"
)

// encodeState carries what the size pass hands over to the write pass: the
// record sets it had to render to learn their size, the sizes of tagged
// field values (written before the values), and the first error.
type encodeState struct {
	blobs []encBlob
	sizes []int
	err   error
	// w is the write pass's writer, kept here so that it is recycled with
	// the state instead of being allocated for every frame; app is the size
	// pass's writer of record sets, for the same reason.
	w   wireWriter
	app wireAppender
}

// writer returns the state's writer, set to append to b.
func (s *encodeState) writer(b []byte) *wireWriter {
	s.w = wireWriter{b: b, blobs: s.blobs, sizes: s.sizes}
	return &s.w
}

var encodeStatePool = sync.Pool{New: func() any { return new(encodeState) }}

func getEncodeState() *encodeState { return encodeStatePool.Get().(*encodeState) }

func putEncodeState(s *encodeState) {
	s.release()
	s.sizes = s.sizes[:0]
	s.err = nil
	s.w = wireWriter{}
	encodeStatePool.Put(s)
}

func (s *encodeState) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

func (s *encodeState) release() {
	for _, b := range s.blobs {
		if b.head != nil {
			wirePutBuffer(b.head)
		}
	}
	clear(s.blobs) // the tails are the caller's records: not ours to keep
	s.blobs = s.blobs[:0]
}

// encBlob is a record set rendered by the size pass: head, in a buffer of
// ours, then tail, bytes the records already held (encoded records sent as
// they are), which the write pass copies straight into the frame instead of
// through head. A nil head stands for a null value.
type encBlob struct {
	head *[]byte
	tail []byte
}

// codec is the compiled wire form of one Go type at one API version. All
// decisions that depend on the struct tags, the version or the flexibility
// of the message are taken when the codec is built; the functions only walk
// values.
type codec struct {
	minSize    int // fewest bytes the wire form can take (for count checks)
	fixed      int // exact wire size when it never varies, else -1
	hasRecords bool
	size       func(s *encodeState, v reflect.Value) int
	encode     func(w *wireWriter, v reflect.Value)
	decode     func(r *wireReader, v reflect.Value)
}

var (
	writerToType   = reflect.TypeOf((*io.WriterTo)(nil)).Elem()
	readerFromType = reflect.TypeOf((*io.ReaderFrom)(nil)).Elem()
	recordSetType  = reflect.TypeOf(RecordSet{})
)

// isRecordsType reports whether values of t are RECORDS: a struct that
// renders and parses its own content (RecordSet, RawRecordSet).
func isRecordsType(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	if t == recordSetType {
		// Even before its methods exist: encoding it as a plain struct
		// would silently drop the records.
		return true
	}
	p := reflect.PointerTo(t)
	return p.Implements(writerToType) && p.Implements(readerFromType)
}

// codecKey names a cached struct codec. A struct is never nullable on the
// wire, so nullability is not part of the key.
type codecKey struct {
	t        reflect.Type
	version  int16
	flexible bool
	strict   bool
}

// compiler builds codecs. Struct codecs are cached so that the element type
// of an array shared by many versions is compiled once per version, and so
// that a (pathological) recursive type does not loop forever.
type compiler struct {
	mu    sync.Mutex
	cache map[codecKey]*codec
	// added lists the struct codecs cached by the compile in progress: when
	// it fails, all of them go, since one built while a failing one was
	// under way may hold that one's empty codec (a recursive type).
	added []codecKey
	// defaults holds the default value of struct types, an invalid Value
	// for those whose default is the zero value.
	defaults map[reflect.Type]reflect.Value
}

var codecs = compiler{cache: make(map[codecKey]*codec), defaults: make(map[reflect.Type]reflect.Value)}

func (c *compiler) compile(t reflect.Type, version int16, flexible, nullable, strict bool) (*codec, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	sc, err := c.build(t, version, flexible, nullable, strict)
	if err != nil {
		for _, k := range c.added {
			delete(c.cache, k)
		}
	}
	clear(c.added) // empty between compiles
	c.added = c.added[:0]
	return sc, err
}

func (c *compiler) build(t reflect.Type, version int16, flexible, nullable, strict bool) (*codec, error) {
	if isRecordsType(t) {
		return recordsCodec(t, flexible), nil
	}
	switch t.Kind() {
	case reflect.Bool:
		return fixedCodec(1,
			func(w *wireWriter, v reflect.Value) { w.bool(v.Bool()) },
			func(r *wireReader, v reflect.Value) { v.SetBool(r.bool()) }), nil
	case reflect.Int8:
		return fixedCodec(1,
			func(w *wireWriter, v reflect.Value) { w.int8(int8(v.Int())) },
			func(r *wireReader, v reflect.Value) { v.SetInt(int64(r.int8())) }), nil
	case reflect.Int16:
		return fixedCodec(2,
			func(w *wireWriter, v reflect.Value) { w.int16(int16(v.Int())) },
			func(r *wireReader, v reflect.Value) { v.SetInt(int64(r.int16())) }), nil
	case reflect.Int32:
		return fixedCodec(4,
			func(w *wireWriter, v reflect.Value) { w.int32(int32(v.Int())) },
			func(r *wireReader, v reflect.Value) { v.SetInt(int64(r.int32())) }), nil
	case reflect.Int64:
		return fixedCodec(8,
			func(w *wireWriter, v reflect.Value) { w.int64(v.Int()) },
			func(r *wireReader, v reflect.Value) { v.SetInt(r.int64()) }), nil
	case reflect.Uint16:
		return fixedCodec(2,
			func(w *wireWriter, v reflect.Value) { w.int16(int16(uint16(v.Uint()))) },
			func(r *wireReader, v reflect.Value) { v.SetUint(uint64(uint16(r.int16()))) }), nil
	case reflect.Uint32:
		return fixedCodec(4,
			func(w *wireWriter, v reflect.Value) { w.int32(int32(uint32(v.Uint()))) },
			func(r *wireReader, v reflect.Value) { v.SetUint(uint64(uint32(r.int32()))) }), nil
	case reflect.Float64:
		return fixedCodec(8,
			func(w *wireWriter, v reflect.Value) { w.float64(v.Float()) },
			func(r *wireReader, v reflect.Value) { v.SetFloat(r.float64()) }), nil
	case reflect.String:
		return stringCodec(flexible, nullable), nil
	case reflect.Array:
		if t.Len() == 16 && t.Elem().Kind() == reflect.Uint8 {
			return uuidCodec(), nil
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return bytesCodec(flexible, nullable), nil
		}
		elem, err := c.build(t.Elem(), version, flexible, false, strict)
		if err != nil {
			return nil, err
		}
		return arrayCodec(t, elem, flexible, nullable), nil
	case reflect.Pointer:
		if t.Elem().Kind() == reflect.Struct && !isRecordsType(t.Elem()) {
			if !nullable {
				return nil, fmt.Errorf("kafka protocol: %s: a pointer field is a nullable struct and needs the nullable option", t)
			}
			elem, err := c.build(t.Elem(), version, flexible, false, strict)
			if err != nil {
				return nil, err
			}
			return nullableStructCodec(t, elem), nil
		}
	case reflect.Struct:
		key := codecKey{t: t, version: version, flexible: flexible, strict: strict}
		if cached := c.cache[key]; cached != nil {
			return cached, nil
		}
		sc := &codec{}
		c.cache[key] = sc
		c.added = append(c.added, key)
		if err := c.buildStruct(sc, t, version, flexible, strict); err != nil {
			return nil, err // compile removes it, with what was built meanwhile
		}
		return sc, nil
	}
	return nil, fmt.Errorf("kafka protocol: type %s has no wire representation", t)
}

// wireAppender is the writer the size pass gives a RECORDS value's WriteTo:
// its bytes are appended to p. A RecordSet whose bytes end with encoded
// records it can send as they are sets tail to those instead of appending
// them (see encBlob): they reach the frame in one copy instead of two.
type wireAppender struct {
	p    *[]byte
	tail []byte
}

func (a *wireAppender) Write(b []byte) (int, error) {
	*a.p = append(*a.p, b...)
	return len(b), nil
}

// recordsNull reports whether the RECORDS value v is null: a RecordSet
// without records that was not read empty, or the zero value of another
// records type.
func recordsNull(v reflect.Value) bool {
	if v.Type() == recordSetType {
		records := v.FieldByIndex(recordSetRecords)
		return records.IsNil() && !v.FieldByIndex(recordSetEmpty).Bool()
	}
	return v.IsZero()
}

var (
	recordSetRecords = fieldIndex(recordSetType, "Records")
	recordSetEmpty   = fieldIndex(recordSetType, "empty")
)

func fieldIndex(t reflect.Type, name string) []int {
	f, ok := t.FieldByName(name)
	if !ok {
		panic("kafka protocol: no field " + name + " in " + t.String())
	}
	return f.Index
}

// recordsCodec handles RECORDS fields: nullable (compact in flexible
// versions) bytes whose content the value renders with WriteTo and parses
// with ReadFrom. A null value (see recordsNull) is null on the wire; null
// decodes to the zero value, and empty bytes decode to whatever ReadFrom
// makes of no input (for RecordSet, a set that writes back as empty).
//
// A RecordSet whose Records yield nothing fails the encoding with
// ErrNoRecord, where a v2 batch or a compressed legacy set would be needed,
// so that such a request is not sent, as upstream kafka-go does; other
// records types reporting ErrNoRecord are written as null.
func recordsCodec(t reflect.Type, flexible bool) *codec {
	prefix := 4
	if flexible {
		prefix = 1
	}
	isRecordSet := t == recordSetType
	c := &codec{minSize: prefix, fixed: -1, hasRecords: true}
	c.size = func(s *encodeState, v reflect.Value) int {
		if recordsNull(v) {
			s.blobs = append(s.blobs, encBlob{})
			return prefix
		}
		if !v.CanAddr() {
			p := reflect.New(t)
			p.Elem().Set(v)
			v = p.Elem()
		}
		wt, ok := v.Addr().Interface().(io.WriterTo)
		if !ok {
			s.fail(fmt.Errorf("kafka protocol: %s cannot be encoded (no WriteTo method)", t))
			s.blobs = append(s.blobs, encBlob{})
			return prefix
		}
		blob := encBlob{head: wireGetBuffer(0)}
		s.app = wireAppender{p: blob.head}
		_, err := wt.WriteTo(&s.app)
		blob.tail = s.app.tail
		s.app = wireAppender{}
		if err != nil {
			wirePutBuffer(blob.head)
			if errors.Is(err, ErrNoRecord) && !isRecordSet {
				s.blobs = append(s.blobs, encBlob{})
				return prefix
			}
			s.fail(err)
			s.blobs = append(s.blobs, encBlob{})
			return prefix
		}
		s.blobs = append(s.blobs, blob)
		n := len(*blob.head) + len(blob.tail)
		if n > math.MaxInt32-1 {
			s.fail(errBytesTooLong)
		}
		if flexible {
			return wireUvarintSize(uint64(n)+1) + n
		}
		return 4 + n
	}
	c.encode = func(w *wireWriter, _ reflect.Value) {
		blob := w.blobs[w.next]
		w.next++
		switch {
		case blob.head == nil && flexible:
			w.uvarint(0)
			return
		case blob.head == nil:
			w.int32(-1)
			return
		case flexible:
			w.uvarint(uint64(len(*blob.head)+len(blob.tail)) + 1)
		default:
			w.int32(int32(len(*blob.head) + len(blob.tail)))
		}
		w.raw(*blob.head)
		w.raw(blob.tail)
	}
	c.decode = func(r *wireReader, v reflect.Value) {
		var n int
		if flexible {
			n = r.compactLen()
		} else {
			n = int(r.int32())
		}
		v.SetZero()
		if s := r.stream; s != nil && r.err == nil {
			s.records(r, n)
			return
		}
		if n < 0 || r.err != nil {
			return
		}
		var data []byte
		if n > 0 {
			if data = r.take(n); data == nil {
				return
			}
		}
		if rs, ok := v.Addr().Interface().(*RecordSet); ok && r.owned {
			if err := rs.readOwned(data); err != nil {
				r.fail(err)
			}
			return
		}
		rf, ok := v.Addr().Interface().(io.ReaderFrom)
		if !ok {
			r.fail(fmt.Errorf("kafka protocol: %s cannot be decoded (no ReadFrom method)", t))
			return
		}
		if _, err := rf.ReadFrom(bytes.NewReader(data)); err != nil {
			r.fail(err)
		}
	}
	return c
}

type structField struct {
	index []int // path to the field, through embedded structs
	tag   int
	c     *codec
	// Tagged fields only: whether a value is the field's default (which
	// stays off the wire), and how an absent field gets it.
	isDefault  func(reflect.Value) bool
	setDefault func(reflect.Value)
}

// field returns the field of struct value v at f's index path.
func (f *structField) field(v reflect.Value) reflect.Value {
	if len(f.index) == 1 {
		return v.Field(f.index[0])
	}
	return v.FieldByIndex(f.index)
}

// isInlineStruct reports whether f is a struct whose fields count as fields
// of the struct holding it: an embedded struct without a kafka tag, or a
// struct field tagged kafka:"inline". The latter is for a group of fields
// that the spec puts directly in a message but that the Go API nests under
// a name (DescribeAcls's Filter): encoding and decoding then go through the
// named field itself, so there is no flat copy to keep in step with it, and
// no tagged-field section of its own in flexible versions.
func isInlineStruct(f reflect.StructField) bool {
	if f.Type.Kind() != reflect.Struct || isRecordsType(f.Type) {
		return false
	}
	tag, tagged := f.Tag.Lookup("kafka")
	if tagged {
		return tag == "inline"
	}
	return f.Anonymous
}

func (c *compiler) buildStruct(sc *codec, t reflect.Type, version int16, flexible, strict bool) error {
	var fields, tagged []structField
	if err := c.collectFields(&fields, &tagged, t, nil, version, flexible, strict); err != nil {
		return err
	}
	// Tagged fields go on the wire in increasing tag order.
	sort.Slice(tagged, func(i, j int) bool { return tagged[i].tag < tagged[j].tag })

	sc.fixed = 0
	for _, f := range fields {
		sc.minSize += f.c.minSize
		sc.hasRecords = sc.hasRecords || f.c.hasRecords
		if f.c.fixed < 0 {
			sc.fixed = -1
		} else if sc.fixed >= 0 {
			sc.fixed += f.c.fixed
		}
	}
	if flexible {
		sc.minSize++
		sc.fixed = -1
	}

	sc.size = func(s *encodeState, v reflect.Value) int {
		n := 0
		for i := range fields {
			f := &fields[i]
			n += f.c.size(s, f.field(v))
		}
		if flexible {
			count := 0
			for i := range tagged {
				f := &tagged[i]
				fv := f.field(v)
				if f.isDefault(fv) {
					continue
				}
				count++
				// Reserve the slot first: the write pass needs this size
				// before the sizes of whatever the value contains.
				slot := len(s.sizes)
				s.sizes = append(s.sizes, 0)
				sz := f.c.size(s, fv)
				s.sizes[slot] = sz
				n += wireUvarintSize(uint64(f.tag)) + wireUvarintSize(uint64(sz)) + sz
			}
			n += wireUvarintSize(uint64(count))
		}
		return n
	}
	sc.encode = func(w *wireWriter, v reflect.Value) {
		for i := range fields {
			f := &fields[i]
			f.c.encode(w, f.field(v))
		}
		if !flexible {
			return
		}
		count := 0
		for i := range tagged {
			f := &tagged[i]
			if !f.isDefault(f.field(v)) {
				count++
			}
		}
		w.uvarint(uint64(count))
		if count == 0 {
			return
		}
		for i := range tagged {
			f := &tagged[i]
			fv := f.field(v)
			if f.isDefault(fv) {
				continue
			}
			w.uvarint(uint64(f.tag))
			w.uvarint(uint64(w.sizes[w.nextSize]))
			w.nextSize++
			f.c.encode(w, fv)
		}
	}
	decode := func(r *wireReader, v reflect.Value) {
		for i := range fields {
			if r.err != nil {
				return
			}
			f := &fields[i]
			f.c.decode(r, f.field(v))
		}
		if !flexible || r.err != nil {
			return
		}
		// What the section leaves out holds its default.
		for i := range tagged {
			f := &tagged[i]
			f.setDefault(f.field(v))
		}
		count := int(r.uvarint())
		// A tagged field takes at least two bytes (its tag and its size).
		if count > r.remaining()/2 {
			r.fail(errWireShort)
			return
		}
		for k := 0; k < count && r.err == nil; k++ {
			tag := int(r.uvarint())
			size := int(r.uvarint())
			if r.err != nil {
				return
			}
			if size < 0 || size > r.remaining() || !r.more(size) {
				r.fail(errWireShort)
				return
			}
			end := r.off + size
			for i := range tagged {
				f := &tagged[i]
				if f.tag != tag {
					continue
				}
				// Decode the value with the frame cut at its end, so
				// that a value longer than its size fails instead of
				// reading into what follows (or, from a stream, reading
				// more of it: the value's bytes are all in b already).
				whole, stream := r.b, r.stream
				r.b, r.stream = r.b[:end], nil
				f.c.decode(r, f.field(v))
				r.b, r.stream = whole, stream
				break
			}
			if r.err == nil {
				r.off = end
			}
		}
	}
	sc.decode = decode
	if sc.hasRecords {
		// A ResponseStream hands out the structs enclosing the records it
		// reaches; only structs that hold records can enclose them.
		sc.decode = func(r *wireReader, v reflect.Value) {
			s := r.stream
			if s == nil {
				decode(r, v)
				return
			}
			s.path = append(s.path, v)
			decode(r, v)
			s.path = s.path[:len(s.path)-1]
		}
	}
	return nil
}

// collectFields appends the wire fields of struct type t at version to
// fields and tagged, descending into embedded structs.
func (c *compiler) collectFields(fields, tagged *[]structField, t reflect.Type, prefix []int, version int16, flexible, strict bool) error {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		index := append(append([]int(nil), prefix...), i)
		if isInlineStruct(f) {
			if err := c.collectFields(fields, tagged, f.Type, index, version, flexible, strict); err != nil {
				return err
			}
			continue
		}
		if f.Name == "_" || !f.IsExported() {
			continue
		}
		raw, hasTag := f.Tag.Lookup("kafka")
		ft, on, err := parseFieldTag(raw, hasTag)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", t, f.Name, err)
		}
		if !on || !ft.versions.has(version) {
			if strict && on && hasTag && !ft.explicit {
				return fmt.Errorf("%s.%s: kafka struct tag %q names no versions", t, f.Name, raw)
			}
			continue
		}
		if err := checkDefault(f.Type, ft); err != nil {
			return fmt.Errorf("%s.%s: %w", t, f.Name, err)
		}
		if ft.tagID >= 0 && !flexible {
			continue
		}
		fc, err := c.build(f.Type, version, flexible, ft.nullable.has(version), strict)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", t, f.Name, err)
		}
		sf := structField{index: index, tag: ft.tagID, c: fc}
		if ft.tagID < 0 {
			*fields = append(*fields, sf)
			continue
		}
		if fc.hasRecords {
			return fmt.Errorf("%s.%s: records cannot be a tagged field", t, f.Name)
		}
		sf.isDefault, sf.setDefault, err = c.taggedDefault(f.Type, ft)
		if err != nil {
			return fmt.Errorf("%s.%s: %w", t, f.Name, err)
		}
		for _, other := range *tagged {
			if other.tag == ft.tagID {
				return fmt.Errorf("%s.%s: tag %d used twice", t, f.Name, ft.tagID)
			}
		}
		*tagged = append(*tagged, sf)
	}
	return nil
}
