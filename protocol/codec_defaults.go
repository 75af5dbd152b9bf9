package protocol

import (
	"fmt"
	"reflect"
)

// Defaults (the default=N tag option) matter for tagged fields only: the
// spec leaves a tagged field off the wire when it holds its default, and a
// reader gives an absent one its default. For a struct-typed tagged field the
// default is the struct with each field at its own default, so the option
// also appears on the (untagged) fields of such structs.

// checkDefault reports a default= option on a field that cannot hold it, or
// a default its type cannot represent.
func checkDefault(t reflect.Type, ft fieldTag) error {
	if !ft.hasDef {
		return nil
	}
	switch t.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if reflect.New(t).Elem().OverflowInt(ft.def) {
			return fmt.Errorf("default %d does not fit in %s", ft.def, t)
		}
	case reflect.Uint16, reflect.Uint32:
		if ft.def < 0 || reflect.New(t).Elem().OverflowUint(uint64(ft.def)) {
			return fmt.Errorf("default %d does not fit in %s", ft.def, t)
		}
	default:
		return fmt.Errorf("default= applies to integer fields, not %s", t)
	}
	return nil
}

func setInteger(v reflect.Value, n int64) {
	if v.CanInt() {
		v.SetInt(n)
	} else {
		v.SetUint(uint64(n))
	}
}

// defaultValue returns the default value of struct type t: every field with
// a default= option set to it, at every depth of inline structs, whatever the
// version (as a freshly built message of the Java client). ok is false when
// that value is the zero value. Array elements are not reached: the default
// of an array is empty. Callers hold c.mu.
func (c *compiler) defaultValue(t reflect.Type) (v reflect.Value, ok bool, err error) {
	if d, seen := c.defaults[t]; seen {
		return d, d.IsValid(), nil
	}
	v = reflect.New(t).Elem()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if isInlineStruct(f) {
			sub, subOK, err := c.defaultValue(f.Type)
			if err != nil {
				return v, false, err
			}
			if subOK {
				v.Field(i).Set(sub)
				ok = true
			}
			continue
		}
		if f.Name == "_" || !f.IsExported() {
			continue
		}
		raw, hasTag := f.Tag.Lookup("kafka")
		ft, on, err := parseFieldTag(raw, hasTag)
		if err != nil {
			return v, false, fmt.Errorf("%s.%s: %w", t, f.Name, err)
		}
		if !on {
			continue
		}
		if err := checkDefault(f.Type, ft); err != nil {
			return v, false, fmt.Errorf("%s.%s: %w", t, f.Name, err)
		}
		switch {
		case ft.hasDef:
			if ft.def != 0 {
				setInteger(v.Field(i), ft.def)
				ok = true
			}
		case f.Type.Kind() == reflect.Struct && !isRecordsType(f.Type):
			sub, subOK, err := c.defaultValue(f.Type)
			if err != nil {
				return v, false, err
			}
			if subOK {
				v.Field(i).Set(sub)
				ok = true
			}
		}
	}
	if !ok {
		v = reflect.Value{}
	}
	c.defaults[t] = v
	return v, ok, nil
}

// taggedDefault returns, for a tagged field of type t with tag ft, the test
// of whether a value is the field's default (and so stays off the wire) and
// the setter that gives an absent field its default.
func (c *compiler) taggedDefault(t reflect.Type, ft fieldTag) (isDefault func(reflect.Value) bool, setDefault func(reflect.Value), err error) {
	if ft.hasDef && ft.def != 0 {
		def := ft.def
		if t.Kind() == reflect.Uint16 || t.Kind() == reflect.Uint32 {
			u := uint64(def)
			return func(v reflect.Value) bool { return v.Uint() == u },
				func(v reflect.Value) { v.SetUint(u) }, nil
		}
		return func(v reflect.Value) bool { return v.Int() == def },
			func(v reflect.Value) { v.SetInt(def) }, nil
	}
	if t.Kind() == reflect.Struct && !isRecordsType(t) {
		dv, ok, err := c.defaultValue(t)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			set := func(v reflect.Value) { v.Set(dv) }
			if t.Comparable() {
				return func(v reflect.Value) bool { return v.Equal(dv) }, set, nil
			}
			want := dv.Interface()
			return func(v reflect.Value) bool { return reflect.DeepEqual(v.Interface(), want) }, set, nil
		}
	}
	return reflect.Value.IsZero, reflect.Value.SetZero, nil
}
