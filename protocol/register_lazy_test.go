package protocol

import (
	"bytes"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// testLazyKey's request has a field that only version 2 has, and whose type
// cannot be encoded as tagged: Register must take it (versions are compiled
// on first use) and only a request at v2 must fail.
const testLazyKey ApiKey = 1004

type testLazyRequest struct {
	_    struct{}  `kafka:"versions=v0-2"`
	Name string    `kafka:"v0+"`
	Bad  *testItem `kafka:"v2+"` // a nullable struct without the nullable option
}

func (*testLazyRequest) ApiKey() ApiKey { return testLazyKey }

type testLazyResponse struct {
	_     struct{} `kafka:"versions=v0-2"`
	Error int16    `kafka:"v0+"`
}

func (*testLazyResponse) ApiKey() ApiKey { return testLazyKey }

// testFirstUseKey's types are used only by TestRegisterFirstUseConcurrent,
// so their codecs are compiled there.
const testFirstUseKey ApiKey = 1005

type testFirstUseRequest struct {
	_     struct{}   `kafka:"versions=v0-1,flexible=v1"`
	Name  string     `kafka:"v0+"`
	Items []testItem `kafka:"v0+"`
}

func (*testFirstUseRequest) ApiKey() ApiKey { return testFirstUseKey }

type testFirstUseResponse struct {
	_     struct{} `kafka:"versions=v0-1,flexible=v1"`
	Error int16    `kafka:"v0+"`
}

func (*testFirstUseResponse) ApiKey() ApiKey { return testFirstUseKey }

func init() {
	Register(&testLazyRequest{}, &testLazyResponse{})
	Register(&testFirstUseRequest{}, &testFirstUseResponse{})
}

var testLazyRuns atomic.Int32

// resetCodecs forgets the compiled versions of m, as before their first use
// (the compiler's cache of struct codecs stays).
func resetCodecs(m *msgType) {
	for i := range m.codecs {
		m.codecs[i].Store(nil)
	}
}

func TestRegisterCompilesVersionsOnFirstUse(t *testing.T) {
	types := currentRegistry().apis[testLazyKey]
	if testLazyRuns.Add(1) == 1 {
		// First run in this process (-count may repeat it): nothing has
		// used these types yet.
		for v := types.req.min; v <= types.req.max; v++ {
			if types.req.codecs[v-types.req.min].Load() != nil {
				t.Fatalf("v%d compiled before its first use", v)
			}
		}
	}
	resetCodecs(types.req)

	var buf bytes.Buffer
	if err := WriteRequest(&buf, 1, 7, "c", &testLazyRequest{Name: "x"}); err != nil {
		t.Fatalf("v1: %v", err)
	}
	if types.req.codecs[1].Load() == nil {
		t.Fatal("v1 not kept after its first use")
	}
	if types.req.codecs[0].Load() != nil || types.req.codecs[2].Load() != nil {
		t.Fatal("a request at v1 compiled other versions")
	}

	err := WriteRequest(&buf, 2, 8, "c", &testLazyRequest{Name: "x"})
	if err == nil || !strings.Contains(err.Error(), "testLazyRequest.Bad") || !strings.Contains(err.Error(), "v2") {
		t.Fatalf("v2 with a malformed tag: got %v, want an error naming the field and the version", err)
	}
	if types.req.codecs[2].Load() != nil {
		t.Fatal("a version that failed to compile was kept")
	}
	if err := WriteRequest(&buf, 3, 9, "c", &testLazyRequest{}); err == nil || !strings.Contains(err.Error(), "v3 not in range") {
		t.Fatalf("v3: got %v, want the version error", err)
	}
}

// Many first uses of one version at once write the same bytes and leave one
// codec (run with -race: the slot is published atomically).
func TestRegisterFirstUseConcurrent(t *testing.T) {
	types := currentRegistry().apis[testFirstUseKey]
	const v = 1
	resetCodecs(types.req)
	msg := &testFirstUseRequest{Name: "n", Items: []testItem{{Key: "k", Value: 1, F: 2, T: 3}}}
	const n = 8
	outs := make([]bytes.Buffer, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			errs[i] = WriteRequest(&outs[i], v, 1, "c", msg)
		}()
	}
	close(start)
	wg.Wait()
	want := types.req.codecs[v].Load()
	if want == nil {
		t.Fatal("not kept after its first use")
	}
	if c, err := types.req.codecFor(v); err != nil || c != want {
		t.Fatalf("codecFor after the first use: %p, %v; want %p", c, err, want)
	}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("goroutine %d: %v", i, errs[i])
		}
		if !bytes.Equal(outs[i].Bytes(), outs[0].Bytes()) {
			t.Fatalf("goroutine %d wrote %x, goroutine 0 %x", i, outs[i].Bytes(), outs[0].Bytes())
		}
	}
}

// testRecursiveKey's request holds, through a recursive pair of structs, a
// field that version 2 cannot encode, and its response the other struct of
// the pair. Compiling the request at v2 builds and caches that other struct
// while the failing one is under way: the failure must not leave it in the
// cache holding the failed one's empty codec, which made the response at v2
// panic instead of failing with the same error (found by review).
const testRecursiveKey ApiKey = 1006

type testRecA struct {
	Cs  []testRecC `kafka:"v0+"`
	Bad *testItem  `kafka:"v2+"` // a nullable struct without the nullable option
}

type testRecC struct {
	As []testRecA `kafka:"v0+"`
}

type testRecursiveRequest struct {
	_ struct{} `kafka:"versions=v0-2"`
	A testRecA `kafka:"v0+"`
}

func (*testRecursiveRequest) ApiKey() ApiKey { return testRecursiveKey }

type testRecursiveResponse struct {
	_ struct{} `kafka:"versions=v0-2"`
	C testRecC `kafka:"v0+"`
}

func (*testRecursiveResponse) ApiKey() ApiKey { return testRecursiveKey }

func init() {
	Register(&testRecursiveRequest{}, &testRecursiveResponse{})
}

func TestRegisterFailedVersionLeavesNoHalfBuiltCodec(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteRequest(&buf, 2, 1, "c", &testRecursiveRequest{}); err == nil || !strings.Contains(err.Error(), "testRecA.Bad") {
		t.Fatalf("request v2: got %v, want the error of testRecA.Bad", err)
	}
	res := &testRecursiveResponse{C: testRecC{As: []testRecA{{Cs: []testRecC{{}}}}}}
	buf.Reset()
	if err := WriteResponse(&buf, 2, 1, res); err == nil || !strings.Contains(err.Error(), "testRecA.Bad") {
		t.Fatalf("response v2: got %v, want the error of testRecA.Bad", err)
	}
	buf.Reset()
	if err := WriteResponse(&buf, 1, 1, res); err != nil {
		t.Fatalf("response v1: %v", err)
	}
	_, got, err := ReadResponse(&buf, testRecursiveKey, 1)
	if err != nil {
		t.Fatalf("reading the response v1 back: %v", err)
	}
	if n := len(got.(*testRecursiveResponse).C.As); n != 1 {
		t.Fatalf("response v1 read back with %d elements, want 1", n)
	}
}
