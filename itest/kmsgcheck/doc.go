// Package kmsgcheck holds the correctness oracle of the protocol package:
// tests that compare its encoding of every registered API and version with
// that of franz-go's kmsg, an independent implementation.
package kmsgcheck
