package kmsgcheck

import (
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
)

// Identical bytes do not prove that a value lands in the right Go field:
// two fields of the same type declared in swapped order still round trip.
// The filler gives every field its own value, so after decoding, each of
// our fields can be traced back to the kmsg field whose value it holds.
// Field names differ between the two projects (ThrottleMillis and
// ThrottleTimeMs), so a mismatch is reported only when it is surely wrong:
// our field holds the value of a kmsg field of another name, while kmsg has
// a field of our field's name next to it (or we have one of kmsg's).

type leaf struct {
	path     string          // with array indexes, e.g. .Topics[1].Partitions[0].ErrorCode
	name     string          // the field's name, lower case
	siblings map[string]bool // lower-case names of the fields of the same struct
}

var indexes = regexp.MustCompile(`\[\d+\]`)

// skeleton is the array-index part of a path: [1][0].
func skeleton(path string) string {
	return strings.Join(indexes.FindAllString(path, -1), "")
}

// collectLeaves maps each unique scalar value found in v to where it is.
// Values seen twice are dropped (dup): they cannot be traced.
func collectLeaves(v reflect.Value, path, name string, siblings map[string]bool, out map[string]leaf, dup map[string]bool, ours bool) {
	if !v.IsValid() {
		return
	}
	key := ""
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			collectLeaves(v.Elem(), path, name, siblings, out, dup, ours)
		}
		return
	case reflect.Int16, reflect.Int32, reflect.Int64:
		if v.Int() != 0 {
			key = fmt.Sprintf("int:%d", v.Int())
		}
	case reflect.String:
		// Strings and bytes share keys: one side may hold as bytes what
		// the other holds as a string.
		if v.Len() > 0 {
			key = "str:" + v.String()
		}
	case reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 && !v.IsZero() {
			b := make([]byte, v.Len())
			reflect.Copy(reflect.ValueOf(b), v)
			key = "str:" + string(b)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			if v.Len() > 0 {
				key = "str:" + string(v.Bytes())
			}
			break
		}
		for i := 0; i < v.Len(); i++ {
			collectLeaves(v.Index(i), fmt.Sprintf("%s[%d]", path, i), name, siblings, out, dup, ours)
		}
		return
	case reflect.Struct:
		if v.Type() == tagsType || (ours && v.Type().PkgPath() == "github.com/segmentio/kafka-go/protocol") {
			return // unknown tags; our record sets
		}
		t := v.Type()
		names := map[string]bool{}
		var fields []int
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() || f.Name == "_" || (!ours && path == "" && f.Name == "Version") {
				continue
			}
			if tag, ok := f.Tag.Lookup("kafka"); ours && (!ok || tag == "-") && !f.Anonymous {
				continue
			}
			names[strings.ToLower(f.Name)] = true
			fields = append(fields, i)
		}
		for _, i := range fields {
			f := t.Field(i)
			if ours && f.Anonymous {
				collectLeaves(v.Field(i), path, name, siblings, out, dup, ours)
				continue
			}
			collectLeaves(v.Field(i), path+"."+f.Name, strings.ToLower(f.Name), names, out, dup, ours)
		}
		return
	}
	if key == "" {
		return
	}
	if _, seen := out[key]; seen {
		dup[key] = true
		return
	}
	out[key] = leaf{path: path, name: name, siblings: siblings}
}

// fieldMapping returns the fields of ours that hold a value kmsg never
// sent, or the value of a kmsg field of another name where the names say it
// must be wrong.
func fieldMapping(kmsgValue, ours any) []string {
	km, kd := map[string]leaf{}, map[string]bool{}
	om, od := map[string]leaf{}, map[string]bool{}
	collectLeaves(reflect.ValueOf(kmsgValue), "", "", nil, km, kd, false)
	collectLeaves(reflect.ValueOf(ours), "", "", nil, om, od, true)
	var out []string
	for key, o := range om {
		k, ok := km[key]
		if !ok {
			// Every value we decode comes from what kmsg encoded; one that
			// does not was read from the wrong bytes (a field of the wrong
			// width, misplaced fields that happen to add up).
			out = append(out, fmt.Sprintf("our %s holds %s, a value kmsg never sent", o.path, strings.TrimPrefix(key, "str:")))
			continue
		}
		if kd[key] || od[key] {
			continue
		}
		if skeleton(o.path) != skeleton(k.path) {
			out = append(out, fmt.Sprintf("our %s holds the value of kmsg's %s (another array element)", o.path, k.path))
			continue
		}
		if o.name == k.name {
			continue
		}
		if k.siblings[o.name] || o.siblings[k.name] {
			out = append(out, fmt.Sprintf("our %s holds the value of kmsg's %s", o.path, k.path))
		}
	}
	sort.Strings(out)
	return out
}
