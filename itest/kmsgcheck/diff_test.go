package kmsgcheck

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
)

// valueDiff lists the paths at which a and b (values of the same type)
// differ, at most limit of them. It is how a byte mismatch is turned into
// the name of the field that went wrong: both sides are decoded by kmsg and
// compared field by field.
func valueDiff(a, b any, limit int) []string {
	var out []string
	walkDiff(reflect.ValueOf(a), reflect.ValueOf(b), "", &out, limit)
	return out
}

func walkDiff(a, b reflect.Value, path string, out *[]string, limit int) {
	if len(*out) >= limit {
		return
	}
	if a.IsValid() != b.IsValid() {
		*out = append(*out, fmt.Sprintf("%s: validity %v vs %v", path, a.IsValid(), b.IsValid()))
		return
	}
	if !a.IsValid() {
		return
	}
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				*out = append(*out, fmt.Sprintf("%s: %s vs %s", path, show(a), show(b)))
			}
			return
		}
		walkDiff(a.Elem(), b.Elem(), path, out, limit)
	case reflect.Struct:
		if a.Type() == tagsType {
			if !reflect.DeepEqual(a.Interface(), b.Interface()) {
				*out = append(*out, fmt.Sprintf("%s: unknown tags differ", path))
			}
			return
		}
		for i := 0; i < a.NumField(); i++ {
			if !a.Type().Field(i).IsExported() {
				continue
			}
			walkDiff(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name, out, limit)
		}
	case reflect.Slice:
		if a.Type().Elem().Kind() == reflect.Uint8 {
			if a.IsNil() != b.IsNil() || !bytes.Equal(a.Bytes(), b.Bytes()) {
				*out = append(*out, fmt.Sprintf("%s: %s vs %s", path, show(a), show(b)))
			}
			return
		}
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			*out = append(*out, fmt.Sprintf("%s: %s vs %s", path, show(a), show(b)))
			return
		}
		for i := 0; i < a.Len(); i++ {
			walkDiff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i), out, limit)
		}
	default:
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			*out = append(*out, fmt.Sprintf("%s: %s vs %s", path, show(a), show(b)))
		}
	}
}

func show(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Slice, reflect.Pointer:
		if v.IsNil() {
			return "null"
		}
		if v.Kind() == reflect.Slice {
			if v.Type().Elem().Kind() == reflect.Uint8 {
				return fmt.Sprintf("%q", v.Bytes())
			}
			return fmt.Sprintf("%d elements", v.Len())
		}
		return show(v.Elem())
	case reflect.String:
		return fmt.Sprintf("%q", v.String())
	}
	return fmt.Sprintf("%v", v.Interface())
}

// bytesDiff describes where got departs from want.
func bytesDiff(want, got []byte) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	lo := max(i-8, 0)
	hiW, hiG := min(i+16, len(want)), min(i+16, len(got))
	var b strings.Builder
	fmt.Fprintf(&b, "%d bytes (kmsg) vs %d bytes (ours), first difference at offset %d\n", len(want), len(got), i)
	fmt.Fprintf(&b, "  kmsg: ...% x\n", want[lo:hiW])
	fmt.Fprintf(&b, "  ours: ...% x", got[lo:hiG])
	return b.String()
}
