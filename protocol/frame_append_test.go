package protocol

import (
	"bytes"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// appendTarget is a writer that offers its buffer to the frame encoder,
// as the transport's frame buffer does.
type appendTarget struct{ b []byte }

func (a *appendTarget) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

func (a *appendTarget) FrameBuffer() *[]byte { return &a.b }

// A frame encoded in place must be byte for byte the frame written
// through io.Writer, appended after what the buffer already held, for
// every codec (record batches are then built inside the request buffer).
func TestFrameAppendMatchesWrite(t *testing.T) {
	for _, attrs := range benchAttributes() {
		for _, version := range []int8{1, 2} {
			req := func() *testRecordsRequest {
				rs := testRecordSet()
				rs.Version, rs.Attributes = version, attrs
				return &testRecordsRequest{Before: 7, Records: rs, After: 9}
			}
			var plain bytes.Buffer
			require.NoError(t, WriteRequest(&plain, 1, 42, "client", req()))
			prefix := []byte("already here")
			dst := &appendTarget{b: append([]byte(nil), prefix...)}
			require.NoError(t, WriteRequest(dst, 1, 42, "client", req()), "%v v%d", attrs, version)
			require.Equal(t, prefix, dst.b[:len(prefix)], "%v v%d: prefix changed", attrs, version)
			require.Equal(t, plain.Bytes(), dst.b[len(prefix):], "%v v%d", attrs, version)
			_, _, _, msg, err := ReadRequest(bytes.NewReader(dst.b[len(prefix):]))
			require.NoError(t, err, "%v v%d", attrs, version)
			require.Equal(t, []string{"v1", "v2"}, readValues(t, msg.(*testRecordsRequest).Records), "%v v%d", attrs, version)
		}
	}
}

// A request that fails to encode leaves the caller's buffer as it was.
func TestFrameAppendErrorLeavesBuffer(t *testing.T) {
	dst := &appendTarget{b: []byte("keep")}
	failing := &testRecordsRequest{Records: RecordSet{Version: 2, Records: &errRecords{}}}
	err := WriteRequest(dst, 1, 1, "c", failing)
	require.Error(t, err)
	require.Equal(t, "keep", string(dst.b))
}

type errRecords struct{ n int }

func (r *errRecords) ReadRecord() (*Record, error) {
	if r.n++; r.n > 1 {
		return nil, errors.New("source failed")
	}
	return &Record{Value: NewBytes([]byte("x"))}, nil
}
