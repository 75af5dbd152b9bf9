// Package keeplimit is the one rule for arrays shared by data a Reader
// hands to the program (fetched keys and values, record headers): a piece
// of at most MaxShared bytes may be cut from a shared array of ArrayBytes,
// so a message the program keeps keeps at most ArrayBytes alive besides its
// own bytes; a larger piece gets an array of its own. Sharing saves an
// allocation per small message (docs/bench/consumer/PROFILE.md); the bound
// is what a program keeping some messages (a cache of a compacted topic)
// pays for it.
package keeplimit

const (
	// ArrayBytes is the size of a shared array.
	ArrayBytes = 4096
	// MaxShared is the largest piece cut from a shared array.
	MaxShared = ArrayBytes / 8
)
