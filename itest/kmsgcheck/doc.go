// Package kmsgcheck holds the correctness oracle of the protocol package:
// tests that compare its encoding of every registered API and version with
// that of franz-go's kmsg, an independent implementation.
//
// For each API, version and direction, kmsg encodes a message populated in
// several ways (every field set to its own value; the spec's defaults;
// empty arrays and bytes; long strings and big arrays; unknown tagged
// fields), our codec decodes the whole frame and encodes it again, and the
// bytes must be identical. kmsg then reads our bytes back, and each value we
// decoded is traced to the kmsg field it came from. Cases where we are known
// to differ are listed, with the reason, in knownMismatches.
//
// Run with: cd itest && go test -race ./kmsgcheck/
package kmsgcheck
