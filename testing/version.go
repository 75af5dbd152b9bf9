package testing

import (
	"os"
	"strconv"
	"strings"
)

// kafkaVersion is the version of the brokers the tests run against, from
// the KAFKA_VERSION environment variable (for example "3.7.0").
var kafkaVersion = parseVersion(os.Getenv("KAFKA_VERSION"))

// KafkaIsAtLeast reports whether the brokers the tests run against, as
// given by the KAFKA_VERSION environment variable, are at version semver or
// later. When KAFKA_VERSION is unset the broker version counts as 0, so the
// result is false for any version above "0" (tests gated on a version are
// skipped unless KAFKA_VERSION says the brokers are recent enough).
//
// It panics if semver (or KAFKA_VERSION) is not made of dot-separated
// numbers: versions in tests are constants.
func KafkaIsAtLeast(semver string) bool {
	return kafkaVersion.atLeast(parseVersion(semver))
}

// version is a dotted version number; missing trailing parts count as 0.
type version []int

func (v version) part(i int) int {
	if i < len(v) {
		return v[i]
	}
	return 0
}

func (v version) atLeast(other version) bool {
	for i := 0; i < max(len(v), len(other)); i++ {
		if a, b := v.part(i), other.part(i); a != b {
			return a > b
		}
	}
	return true
}

func parseVersion(s string) version {
	if s == "" {
		return nil
	}
	parts := strings.Split(s, ".")
	v := make(version, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			panic("invalid version string: " + s)
		}
		v[i] = n
	}
	return v
}
