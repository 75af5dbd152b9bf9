// Package protocol implements the Kafka wire protocol: framing, version
// negotiation, the record batches, and a codec driven by struct tags that
// the per-API message types (one sub-package each: produce, fetch,
// metadata, ...) use to describe themselves.
//
// # Message types
//
// A sub-package declares a Request and a Response struct, gives both an
// ApiKey method, and calls Register(&Request{}, &Response{}) from init.
// Register reads the struct tags once and builds, for every version, the
// functions that encode and decode the type; nothing is parsed per message.
//
// The first field of a message type states which versions exist and from
// which one on the message is "flexible" (KIP-482: compact lengths and
// tagged fields):
//
//	_ struct{} `kafka:"versions=v0-11,flexible=v9"`
//
// "flexible=none" means no version in the range is flexible.
//
// # Field tags
//
// Every other field that goes on the wire carries a kafka tag made of
// comma-separated options:
//
//	v3+            the field exists in version 3 and later
//	v0-4           the field exists in versions 0 to 4 only
//	v5             the field exists in version 5 only
//	nullable       the field may be null, in every version it exists in
//	nullable=v5+   the field may be null from version 5 on (any range works)
//	tag=N          the field is tagged field N of its struct (flexible
//	               versions only); it is sent only when it differs from
//	               its default, and takes its default when absent
//	default=N      the default of an integer field (N in Go syntax: -1,
//	               0x7fffffff); without it the default is zero
//
// Defaults follow the spec's "default" entries and matter for tagged fields
// only. The default of a struct-typed tagged field is the struct with each
// field (at any depth of inline structs) at its own default, so default=N
// also goes on the untagged members of such structs: Fetch's CurrentLeader
// {LeaderID -1, LeaderEpoch -1} is left out when it holds -1, -1, is sent
// when it holds 0, 0 (a real leader and epoch), and reads as -1, -1 when the
// broker left it out. Any other field's default is its Go zero value (0,
// false, "", a nil slice: an empty non-nil slice is sent).
//
// A field with no kafka tag, or with kafka:"-", is not on the wire.
// Unexported fields are ignored. An embedded struct without a tag lends
// its fields to the embedding struct, and so does a named struct field
// tagged kafka:"inline" (its fields carry their own tags; it adds no
// tagged-field section of its own).
//
// # Types
//
// The Go type of a field gives its wire type:
//
//	bool                      BOOLEAN
//	int8, int16, int32, int64 INT8, INT16, INT32, INT64
//	uint16, uint32            UINT16, UINT32
//	float64                   FLOAT64
//	string                    STRING, COMPACT_STRING in flexible versions;
//	                          when nullable, "" is sent as null and null
//	                          reads as ""
//	[]byte                    BYTES, COMPACT_BYTES in flexible versions;
//	                          when nullable, nil is null
//	[16]byte                  UUID
//	[]T                       ARRAY of T, COMPACT_ARRAY in flexible versions,
//	                          for any supported T; when nullable, nil is null
//	struct                    its fields, in order, inline; in flexible
//	                          versions followed by its own tagged fields
//	*struct                   a nullable struct (the field must be
//	                          nullable): INT8 -1 for nil, else 1 and the
//	                          struct
//	RecordSet, RawRecordSet   RECORDS: nullable bytes (compact in flexible
//	                          versions) that the value renders with WriteTo
//	                          and parses with ReadFrom; the zero value is
//	                          null, and null and empty records each decode
//	                          to a value that writes back the same way. A
//	                          RecordSet whose Records yield nothing cannot
//	                          be a v2 batch: encoding fails with ErrNoRecord
//
// In flexible versions every struct (the message, each array element, each
// inline struct) ends with its tagged-fields section. Tagged fields are
// written in increasing tag order; tags a decoder does not know are skipped.
//
// # Decoding untrusted input
//
// Responses are read frame by frame. A frame is read into memory as its
// bytes arrive, so announcing a huge size costs nothing until the bytes are
// there, and every length or count inside is checked against the bytes left
// in the frame before anything is allocated for it. Malformed input yields
// an error, io.ErrUnexpectedEOF when a length points past the end.
//
// # Headers
//
// Requests use header v1, or v2 (with a tagged-fields section) in flexible
// versions. Responses use header v0, or v1 in flexible versions, except
// ApiVersions responses, which always use v0.
//
// # Marshal and Unmarshal
//
// Marshal and Unmarshal apply the same rules to arbitrary values at a given
// version. Struct fields select versions with the tags above (or the older
// min=vN,max=vN form); fields without a tag exist only at version -1, the
// version used by kafka.Marshal. Top-level strings and byte slices are
// nullable.
package protocol
