package protocol

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// vrange is an inclusive range of API versions. The zero value holds only
// version 0; noVersions holds none.
type vrange struct{ lo, hi int16 }

var (
	noVersions  = vrange{lo: 1, hi: 0}
	allVersions = vrange{lo: math.MinInt16, hi: math.MaxInt16}
)

func (r vrange) has(v int16) bool { return r.lo <= v && v <= r.hi }

func (r vrange) empty() bool { return r.lo > r.hi }

// parseVersionNumber accepts "v7" or "7".
func parseVersionNumber(s string) (int16, error) {
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "v"), 10, 16)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("bad version %q", s)
	}
	return int16(n), nil
}

// parseVersionRange accepts "vN+" (N and later), "vN-M" or "vN-vM", and
// "vN" (that version only).
func parseVersionRange(s string) (vrange, error) {
	if rest, ok := strings.CutSuffix(s, "+"); ok {
		lo, err := parseVersionNumber(rest)
		return vrange{lo: lo, hi: math.MaxInt16}, err
	}
	if a, b, ok := strings.Cut(s, "-"); ok {
		lo, err := parseVersionNumber(a)
		if err != nil {
			return noVersions, err
		}
		hi, err := parseVersionNumber(b)
		if err != nil {
			return noVersions, err
		}
		if hi < lo {
			return noVersions, fmt.Errorf("empty version range %q", s)
		}
		return vrange{lo: lo, hi: hi}, nil
	}
	n, err := parseVersionNumber(s)
	return vrange{lo: n, hi: n}, err
}

func isVersionRange(s string) bool {
	return len(s) > 1 && s[0] == 'v' && s[1] >= '0' && s[1] <= '9'
}

// fieldTag is the parsed `kafka` tag of one struct field.
type fieldTag struct {
	versions vrange
	nullable vrange
	tagID    int  // -1 when the field is not a tagged field
	explicit bool // the tag named the field's versions
	// def is the field's default (default=N), meaningful when hasDef: a
	// tagged field is left out when it holds it and takes it when absent,
	// and a struct's default value has it in this field.
	def    int64
	hasDef bool
}

// parseFieldTag parses a field's tag. Besides our own syntax it accepts the
// options of the historical syntax (min=vN, max=vN, compact, bare tag), so
// that values handed to Marshal by existing user code keep their meaning.
// hasTag reports whether the field had a `kafka` tag at all; a field without
// one exists only at version -1 (the version Marshal uses by default).
func parseFieldTag(tag string, hasTag bool) (fieldTag, bool, error) {
	ft := fieldTag{versions: vrange{lo: -1, hi: -1}, nullable: noVersions, tagID: -1}
	if !hasTag {
		return ft, true, nil
	}
	if tag == "-" {
		return ft, false, nil
	}
	minSet, maxSet, rangeSet := false, false, false
	for _, item := range strings.Split(tag, ",") {
		item = strings.TrimSpace(item)
		var err error
		switch {
		case item == "":
		case isVersionRange(item):
			if rangeSet {
				return ft, false, fmt.Errorf("two version ranges in %q", tag)
			}
			ft.versions, err = parseVersionRange(item)
			rangeSet = true
		case item == "nullable":
			ft.nullable = allVersions
		case strings.HasPrefix(item, "nullable="):
			ft.nullable, err = parseVersionRange(item[len("nullable="):])
		case strings.HasPrefix(item, "tag="):
			var n int
			n, err = strconv.Atoi(item[len("tag="):])
			if err == nil && n < 0 {
				err = fmt.Errorf("negative tag in %q", tag)
			}
			ft.tagID = n
		case strings.HasPrefix(item, "default="):
			// Base 0 so that the spec's 0x7fffffff reads as written.
			ft.def, err = strconv.ParseInt(item[len("default="):], 0, 64)
			ft.hasDef = true
		case strings.HasPrefix(item, "min="):
			ft.versions.lo, err = parseVersionNumber(item[len("min="):])
			minSet = true
		case strings.HasPrefix(item, "max="):
			ft.versions.hi, err = parseVersionNumber(item[len("max="):])
			maxSet = true
		case item == "compact", item == "tag":
			// Historical options: compactness follows from the version
			// being flexible, and tag sections from the struct itself.
		default:
			err = fmt.Errorf("unknown option %q", item)
		}
		if err != nil {
			return ft, false, fmt.Errorf("kafka struct tag %q: %w", tag, err)
		}
	}
	if minSet != maxSet {
		return ft, false, fmt.Errorf("kafka struct tag %q: min= and max= go together", tag)
	}
	if (minSet || maxSet) && rangeSet {
		return ft, false, fmt.Errorf("kafka struct tag %q: both a version range and min=/max=", tag)
	}
	ft.explicit = rangeSet || minSet
	if ft.versions.empty() {
		return ft, false, fmt.Errorf("kafka struct tag %q: empty version range", tag)
	}
	return ft, true, nil
}

// headerTag is the parsed tag of the `_ struct{}` field that opens every
// registered message type.
type headerTag struct {
	versions vrange
	flexible int16 // first flexible version; MaxInt16 when none
}

func parseHeaderTag(tag string) (headerTag, error) {
	h := headerTag{versions: noVersions, flexible: math.MaxInt16}
	seenVersions := false
	for _, item := range strings.Split(tag, ",") {
		item = strings.TrimSpace(item)
		key, val, _ := strings.Cut(item, "=")
		var err error
		switch key {
		case "":
		case "versions":
			h.versions, err = parseVersionRange(val)
			if err == nil && h.versions.hi == math.MaxInt16 {
				err = fmt.Errorf("the version range must be closed")
			}
			seenVersions = true
		case "flexible":
			if val != "none" {
				var r vrange
				r, err = parseVersionRange(strings.TrimSuffix(val, "+") + "+")
				h.flexible = r.lo
			}
		default:
			err = fmt.Errorf("unknown option %q", item)
		}
		if err != nil {
			return h, fmt.Errorf("kafka message tag %q: %w", tag, err)
		}
	}
	if !seenVersions {
		return h, fmt.Errorf("kafka message tag %q: no versions=", tag)
	}
	return h, nil
}
