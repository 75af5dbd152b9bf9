package protocol

import "hash/crc32"

// Message format v2 checksums use CRC-32C. A table made by MakeTable for the
// Castagnoli polynomial is recognised by hash/crc32, which then uses the
// CPU's CRC32 instructions where there are some. Legacy messages (v0, v1)
// use the IEEE polynomial (crc32.ChecksumIEEE).
var rbCastagnoli = crc32.MakeTable(crc32.Castagnoli)

func rbCRC32C(b []byte) uint32 { return crc32.Checksum(b, rbCastagnoli) }

// rbCRC32CUpdate continues crc, a CRC-32C, over b.
func rbCRC32CUpdate(crc uint32, b []byte) uint32 { return crc32.Update(crc, rbCastagnoli, b) }
