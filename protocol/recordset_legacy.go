package protocol

import (
	"encoding/binary"
	"hash/crc32"
	"io"
	"time"
)

// Legacy message sets (magic 0 and 1) as RecordSet.ReadFrom decodes them:
// the parsing of one message and the reader of a run of messages.

// rbMessage is a legacy message, its key and value still in the input.
type rbMessage struct {
	offset int64
	magic  int8
	attrs  uint8
	ts     int64
	key    []byte // nil when null
	value  []byte // nil when null
}

// rbParseMessage parses the legacy message at the start of b, which holds at
// least its magic byte, and returns its size.
func rbParseMessage(b []byte) (m rbMessage, size int, err error) {
	be := binary.BigEndian
	m.magic = int8(b[rbLegacyMagic])
	if m.magic != 0 && m.magic != 1 {
		return m, 0, Errorf("unsupported message version %d", m.magic)
	}
	least := int64(4 + 1 + 1 + 4 + 4) // crc, magic, attributes, key and value lengths
	if m.magic >= 1 {
		least += 8 // timestamp
	}
	length := int64(int32(be.Uint32(b[rbLegacySize:])))
	if length < least {
		return m, 0, Errorf("message size %d is too small for a magic %d message", length, m.magic)
	}
	if length > int64(len(b)-rbLegacyCRC) {
		return m, 0, io.ErrUnexpectedEOF
	}
	size = rbLegacyCRC + int(length)
	if sum, want := crc32.ChecksumIEEE(b[rbLegacyMagic:size]), be.Uint32(b[rbLegacyCRC:]); sum != want {
		return m, 0, Errorf("crc32 checksum mismatch in message (computed=%d found=%d)", sum, want)
	}
	m.offset = int64(be.Uint64(b[rbLegacyOffset:]))
	m.attrs = b[rbLegacyAttributes]
	rest := b[rbLegacyAttributes+1 : size]
	if m.magic >= 1 {
		m.ts = int64(be.Uint64(rest)) // the size check above makes room for it
		rest = rest[8:]
	}
	if m.key, rest, err = rbBytes32(rest); err != nil {
		return m, 0, err
	}
	// Bytes after the value are covered by the CRC and harmless: ignored.
	if m.value, _, err = rbBytes32(rest); err != nil {
		return m, 0, err
	}
	return m, size, nil
}

// rbLegacyReader reads validated legacy messages.
type rbLegacyReader struct {
	owner          *rbShared
	data           []byte // messages not yet read
	total, next    int
	adjust         int64 // added to each message's offset
	wrapperTime    int64
	useWrapperTime bool
	slots          []rbBytes
	rec            Record
}

func (r *rbLegacyReader) ReadRecord() (*Record, error) {
	if r.next >= r.total {
		r.data = nil
		if o := r.owner; o != nil {
			r.owner = nil
			o.release()
		}
		return nil, io.EOF
	}
	if r.slots == nil {
		r.slots = make([]rbBytes, 2*r.total)
	}
	m, size, err := rbParseMessage(r.data)
	if err != nil { // cannot happen after validation
		r.next = r.total
		return nil, err
	}
	r.data = r.data[size:]
	i := r.next
	r.next++

	r.rec = Record{Offset: m.offset + r.adjust}
	switch {
	case r.useWrapperTime:
		r.rec.Time = time.UnixMilli(r.wrapperTime)
	case m.magic >= 1:
		r.rec.Time = time.UnixMilli(m.ts)
	}
	r.rec.Key = r.slot(2*i, m.key)
	r.rec.Value = r.slot(2*i+1, m.value)
	return &r.rec, nil
}

func (r *rbLegacyReader) slot(i int, b []byte) Bytes {
	if b == nil {
		return nil
	}
	s := &r.slots[i]
	s.data, s.owner = b, r.owner
	r.owner.retain()
	return s
}
