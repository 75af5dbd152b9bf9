package kafka

import (
	"encoding"
	"fmt"
	"strconv"
)

// RequiredAcks is how many replicas must acknowledge a produce request
// before the broker answers it.
type RequiredAcks int

const (
	RequireNone RequiredAcks = 0
	RequireOne  RequiredAcks = 1
	RequireAll  RequiredAcks = -1
)

func (acks RequiredAcks) String() string {
	switch acks {
	case RequireNone:
		return "none"
	case RequireOne:
		return "one"
	case RequireAll:
		return "all"
	}
	return "unknown"
}

// MarshalText encodes acks as "none", "one" or "all" (or "unknown").
func (acks RequiredAcks) MarshalText() ([]byte, error) {
	return []byte(acks.String()), nil
}

// UnmarshalText accepts the names produced by MarshalText as well as the
// numbers 0, 1 and -1.
func (acks *RequiredAcks) UnmarshalText(b []byte) error {
	s := string(b)
	for _, v := range [...]RequiredAcks{RequireNone, RequireOne, RequireAll} {
		if s == v.String() {
			*acks = v
			return nil
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err == nil {
		switch v := RequiredAcks(n); v {
		case RequireNone, RequireOne, RequireAll:
			*acks = v
			return nil
		}
	}
	return fmt.Errorf("required acks must be one of none, one, or all, not %q", b)
}

var (
	_ encoding.TextMarshaler   = RequiredAcks(0)
	_ encoding.TextUnmarshaler = (*RequiredAcks)(nil)
)
