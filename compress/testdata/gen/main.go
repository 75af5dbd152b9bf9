// Builds xerial-framed and bare snappy payloads straight from the format
// description, independent of the codec under test.
package main

import (
	"encoding/binary"
	"os"

	"github.com/klauspost/compress/snappy"
)

func main() {
	in, _ := os.ReadFile(os.Args[1])
	out := []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1}
	// snappy-java writes 32 KiB blocks; use an odd size to prove the reader
	// does not depend on block boundaries.
	for len(in) > 0 {
		n := min(len(in), 20000)
		blk := snappy.Encode(nil, in[:n])
		out = binary.BigEndian.AppendUint32(out, uint32(len(blk)))
		out = append(out, blk...)
		in = in[n:]
	}
	os.WriteFile(os.Args[2], out, 0o644)
	in, _ = os.ReadFile(os.Args[1])
	os.WriteFile(os.Args[3], snappy.Encode(nil, in), 0o644)
}
