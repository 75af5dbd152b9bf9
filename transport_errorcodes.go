package kafka

import (
	"reflect"
	"sync"
)

// Which responses tell that the cluster layout or a coordinator the
// Transport cached is out of date: the error codes, found by reflection once
// per response type.

// Error codes telling that the cached layout is wrong (the partition moved
// or does not exist where we thought), or that a coordinator moved.
var (
	leaderErrorCodes = map[int16]bool{
		int16(UnknownTopicOrPartition): true,
		int16(LeaderNotAvailable):      true,
		int16(NotLeaderForPartition):   true,
		int16(BrokerNotAvailable):      true,
		int16(ReplicaNotAvailable):     true,
		int16(KafkaStorageError):       true,
		int16(FencedLeaderEpoch):       true,
		int16(UnknownLeaderEpoch):      true,
		int16(NotController):           true,
	}
	coordinatorErrorCodes = map[int16]bool{
		int16(NotCoordinatorForGroup):       true,
		int16(GroupCoordinatorNotAvailable): true,
	}
)

var errorCodeFields sync.Map // reflect.Type -> []errorCodeField

type errorCodeField struct {
	index []int // path to an int16 ErrorCode field, or to a slice
	elems bool  // index leads to a slice of structs to scan
}

// scanErrorCodes looks at every ErrorCode field of a response (at any
// depth) for codes that call for a metadata refresh or a new coordinator.
func scanErrorCodes(res Response) (leader, coordinator bool) {
	v := reflect.ValueOf(res)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		for _, f := range errorFieldsOf(v.Type()) {
			fv := v.FieldByIndex(f.index)
			if !f.elems {
				code := int16(fv.Int())
				leader = leader || leaderErrorCodes[code]
				coordinator = coordinator || coordinatorErrorCodes[code]
				continue
			}
			for i := 0; i < fv.Len(); i++ {
				walk(fv.Index(i))
			}
		}
	}
	walk(v)
	return
}

func errorFieldsOf(t reflect.Type) []errorCodeField {
	if f, ok := errorCodeFields.Load(t); ok {
		return f.([]errorCodeField)
	}
	var fields []errorCodeField
	var visit func(t reflect.Type, prefix []int, depth int)
	visit = func(t reflect.Type, prefix []int, depth int) {
		if depth > 8 {
			return
		}
		for i := 0; i < t.NumField(); i++ {
			sf := t.Field(i)
			if !sf.IsExported() {
				continue
			}
			index := append(append([]int(nil), prefix...), i)
			switch {
			case sf.Name == "ErrorCode" && sf.Type.Kind() == reflect.Int16:
				fields = append(fields, errorCodeField{index: index})
			case sf.Type.Kind() == reflect.Struct:
				visit(sf.Type, index, depth+1)
			case sf.Type.Kind() == reflect.Slice && sf.Type.Elem().Kind() == reflect.Struct && hasErrorCode(sf.Type.Elem(), 0):
				fields = append(fields, errorCodeField{index: index, elems: true})
			}
		}
	}
	visit(t, nil, 0)
	errorCodeFields.Store(t, fields)
	return fields
}

func hasErrorCode(t reflect.Type, depth int) bool {
	if depth > 8 {
		return false
	}
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		switch {
		case !sf.IsExported():
		case sf.Name == "ErrorCode" && sf.Type.Kind() == reflect.Int16:
			return true
		case sf.Type.Kind() == reflect.Struct:
			if hasErrorCode(sf.Type, depth+1) {
				return true
			}
		case sf.Type.Kind() == reflect.Slice && sf.Type.Elem().Kind() == reflect.Struct:
			if hasErrorCode(sf.Type.Elem(), depth+1) {
				return true
			}
		}
	}
	return false
}
