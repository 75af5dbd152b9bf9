//go:build race

package protocol

// sync.Pool drops items at random under the race detector, which makes
// allocation counts meaningless there.
const raceEnabled = true
