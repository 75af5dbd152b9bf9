package protocol

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// hintedRecords is a record reader that claims a size, right or wrong.
type hintedRecords struct {
	RecordReader
	hint int
}

func (h *hintedRecords) SizeHint() int { return h.hint }

// A size hint only sizes the encoder's buffer: whatever it says (none,
// too small, too large, absurd), every codec writes the same bytes.
func TestRecordSetSizeHintDoesNotChangeBytes(t *testing.T) {
	for _, attrs := range benchAttributes() {
		encode := func(hint int, hinted bool) []byte {
			recs := newBenchRecords(50)
			var rr RecordReader = &recs.reader
			if hinted {
				rr = &hintedRecords{RecordReader: rr, hint: hint}
			}
			var buf bytes.Buffer
			rs := RecordSet{Version: 2, Attributes: attrs, Records: rr}
			_, err := rs.WriteTo(&buf)
			require.NoError(t, err)
			return buf.Bytes()
		}
		want := encode(0, false)
		for _, hint := range []int{-5, 0, 1, 100, len(want), 1 << 30} {
			require.Equal(t, want, encode(hint, true), fmt.Sprintf("%v, hint %d", attrs, hint))
		}
	}
}
