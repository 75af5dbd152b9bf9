package protocol

import (
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
)

// msgType is a registered request or response type. Its codec of each
// version is compiled on first use: a program keeps the codecs of the few
// APIs and versions it speaks, not of all 40 APIs at every version, which
// would stay on the heap, and be marked by every garbage collection, for
// the life of the process.
type msgType struct {
	key      ApiKey
	typ      reflect.Type // the struct type (messages are used as pointers)
	min, max int16
	flexFrom int16 // first flexible version, MaxInt16 when none
	codecs   []atomic.Pointer[codec]
}

func (m *msgType) flexible(v int16) bool { return v >= m.flexFrom }

// codecFor returns the codec of version v, compiling it the first time;
// an error when v is out of range or the struct tags are malformed.
func (m *msgType) codecFor(v int16) (*codec, error) {
	if v < m.min || v > m.max {
		return nil, versionError(m.key, v, m)
	}
	slot := &m.codecs[v-m.min]
	if c := slot.Load(); c != nil {
		return c, nil
	}
	// Two first uses at once compile under the compiler's lock and get
	// the same cached struct codec.
	c, err := codecs.compile(m.typ, v, m.flexible(v), false, true)
	if err != nil {
		return nil, fmt.Errorf("%s v%d: %w", m.typ, v, err)
	}
	slot.Store(c)
	return c, nil
}

func (m *msgType) newMessage() Message {
	return reflect.New(m.typ).Interface().(Message)
}

type apiTypes struct {
	req, res *msgType
}

// registrySnapshot is replaced as a whole on every registration, so that
// the encode and decode paths read it with a single atomic load and no lock.
type registrySnapshot struct {
	apis      map[ApiKey]apiTypes
	overrides map[overrideKey]apiTypes
	byType    map[reflect.Type]*msgType
}

type overrideKey struct {
	api ApiKey
	key OverrideTypeKey
}

var (
	registryMu sync.Mutex
	registry   atomic.Pointer[registrySnapshot]
)

func init() {
	registry.Store(&registrySnapshot{
		apis:      map[ApiKey]apiTypes{},
		overrides: map[overrideKey]apiTypes{},
		byType:    map[reflect.Type]*msgType{},
	})
}

func currentRegistry() *registrySnapshot { return registry.Load() }

// Register makes req and res the request and response types of their API
// (the ApiKey they return). Their version headers are read right away (a
// malformed one panics); the codec of each version is compiled on its first
// use, where a malformed field tag is an error (TestEveryMessageRoundTrips
// compiles every version of every registered type).
func Register(req, res Message) {
	types := compileTypes(req, res)
	updateRegistry(func(s *registrySnapshot) {
		s.apis[types.req.key] = types
	}, types)
}

// RegisterOverride registers an alternative request/response pair for an
// API, used to encode requests whose TypeKey returns key (the raw produce
// request, which carries pre-encoded record sets, is one).
func RegisterOverride(req, res Message, key OverrideTypeKey) {
	types := compileTypes(req, res)
	updateRegistry(func(s *registrySnapshot) {
		s.overrides[overrideKey{api: types.req.key, key: key}] = types
	}, types)
}

func compileTypes(req, res Message) apiTypes {
	k1, k2 := req.ApiKey(), res.ApiKey()
	if k1 != k2 {
		panic(fmt.Sprintf("protocol.Register: %T has API key %d but %T has %d", req, k1, res, k2))
	}
	rq, err := compileMessage(req)
	if err != nil {
		panic("protocol.Register: " + err.Error())
	}
	rs, err := compileMessage(res)
	if err != nil {
		panic("protocol.Register: " + err.Error())
	}
	return apiTypes{req: rq, res: rs}
}

func updateRegistry(update func(*registrySnapshot), types apiTypes) {
	registryMu.Lock()
	defer registryMu.Unlock()
	old := registry.Load()
	s := &registrySnapshot{
		apis:      make(map[ApiKey]apiTypes, len(old.apis)+1),
		overrides: make(map[overrideKey]apiTypes, len(old.overrides)+1),
		byType:    make(map[reflect.Type]*msgType, len(old.byType)+2),
	}
	for k, v := range old.apis {
		s.apis[k] = v
	}
	for k, v := range old.overrides {
		s.overrides[k] = v
	}
	for k, v := range old.byType {
		s.byType[k] = v
	}
	update(s)
	s.byType[types.req.typ] = types.req
	if _, ok := s.byType[types.res.typ]; !ok {
		s.byType[types.res.typ] = types.res
	}
	registry.Store(s)
}

func messageStructType(m Message) (reflect.Type, error) {
	if m == nil {
		return nil, fmt.Errorf("kafka protocol: nil message")
	}
	t := reflect.TypeOf(m)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%T is not a struct or a pointer to a struct", m)
	}
	return t, nil
}

// compileMessage reads the version header of a message type (its `_`
// field); the codecs of its versions are built on first use (codecFor).
func compileMessage(m Message) (*msgType, error) {
	t, err := messageStructType(m)
	if err != nil {
		return nil, err
	}
	if !reflect.PointerTo(t).Implements(reflect.TypeOf((*Message)(nil)).Elem()) {
		return nil, fmt.Errorf("*%s does not implement Message", t)
	}
	hdr, err := findHeaderTag(t)
	if err != nil {
		return nil, err
	}
	if hdr == nil {
		return nil, fmt.Errorf("%s: no `_ struct{}` field with a kafka:\"versions=...\" tag", t)
	}
	mt := &msgType{
		key:      m.ApiKey(),
		typ:      t,
		min:      hdr.versions.lo,
		max:      hdr.versions.hi,
		flexFrom: hdr.flexible,
	}
	if mt.max-mt.min > 1000 {
		return nil, fmt.Errorf("%s: unreasonable version range v%d-v%d", t, mt.min, mt.max)
	}
	mt.codecs = make([]atomic.Pointer[codec], int(mt.max-mt.min)+1)
	return mt, nil
}

// encodeType returns the registered type of msg's Go type, which is the
// override type for messages that implement OverrideTypeMessage.
func (s *registrySnapshot) encodeType(msg Message) (*msgType, error) {
	t, err := messageStructType(msg)
	if err != nil {
		return nil, err
	}
	if mt := s.byType[t]; mt != nil {
		return mt, nil
	}
	if v := reflect.ValueOf(msg); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, fmt.Errorf("kafka protocol: cannot encode a nil %T", msg)
	}
	key := msg.ApiKey()
	if _, ok := s.apis[key]; !ok {
		return nil, unsupportedAPI(key)
	}
	return nil, fmt.Errorf("unsupported message type %T for API %s (not registered)", msg, key)
}

func unsupportedAPI(key ApiKey) error {
	if key < 0 || int(key) >= len(apiNames) {
		return fmt.Errorf("unsupported api key: %d", int(key))
	}
	return fmt.Errorf("unsupported api: %s", key)
}

func versionError(key ApiKey, v int16, m *msgType) error {
	return fmt.Errorf("unsupported %s version: v%d not in range v%d-v%d", key, v, m.min, m.max)
}

// findHeaderTag returns the parsed tag of t's `_` field, looking into
// embedded structs too; nil if there is none.
func findHeaderTag(t reflect.Type) (*headerTag, error) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Name == "_" {
			if tag, ok := f.Tag.Lookup("kafka"); ok {
				h, err := parseHeaderTag(tag)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", t, err)
				}
				return &h, nil
			}
		}
		if isInlineStruct(f) {
			if h, err := findHeaderTag(f.Type); h != nil || err != nil {
				return h, err
			}
		}
	}
	return nil, nil
}
