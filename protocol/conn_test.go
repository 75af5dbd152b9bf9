package protocol

import (
	"bytes"
	"errors"
	"io"
	"net"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServer answers each request read from conn with respond(request).
// It returns when the connection is closed.
func fakeServer(t *testing.T, conn net.Conn, respond func(v int16, id int32, client string, req Message) (int32, Message)) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer conn.Close()
		for {
			v, id, client, req, err := ReadRequest(conn)
			if err != nil {
				return
			}
			rid, res := respond(v, id, client, req)
			if res == nil {
				continue
			}
			if err := WriteResponse(conn, v, rid, res); err != nil {
				t.Errorf("server: %v", err)
				return
			}
		}
	}()
	return &wg
}

func TestRoundTripOverPipe(t *testing.T) {
	client, server := net.Pipe()
	var seen []string
	wg := fakeServer(t, server, func(v int16, id int32, cid string, req Message) (int32, Message) {
		r := req.(*testRequest)
		seen = append(seen, r.Name)
		if r.Name == "quiet" {
			return id, nil
		}
		res := &testResponse{Error: int16(v), Names: []string{r.Name, cid}}
		if r.Name == "wrong-id" {
			id++
		}
		return id, res
	})

	res, err := RoundTrip(client, 2, 10, "cli", &testRequest{Name: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	want := &testResponse{Error: 2, Names: []string{"hello", "cli"}}
	if !reflect.DeepEqual(res, want) {
		t.Fatalf("got %+v, want %+v", res, want)
	}

	_, err = RoundTrip(client, 0, 11, "cli", &testRequest{Name: "wrong-id"})
	if err == nil || !strings.Contains(err.Error(), "correlation id mismatch") {
		t.Fatalf("err = %v", err)
	}
	client.Close()
	wg.Wait()
	if len(seen) != 2 {
		t.Fatalf("server saw %v", seen)
	}
}

func TestRoundTripWithoutResponse(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	done := make(chan Message, 1)
	go func() {
		// The request is registered under testRequest's type only, so
		// encode it as one; HasResponse comes from the wrapper.
		_, _, _, req, err := ReadRequest(server)
		if err != nil {
			t.Error(err)
		}
		done <- req
		server.Close()
	}()
	msg := &quietRequest{testRequest{Name: "fire and forget"}}
	res, err := RoundTrip(client, 1, 1, "c", msg)
	if err != nil || res != nil {
		t.Fatalf("res=%v err=%v", res, err)
	}
	if got := <-done; got.(*testRequest).Name != "fire and forget" {
		t.Fatalf("server got %+v", got)
	}
}

// quietRequest is testRequest on the wire but expects no response.
type quietRequest struct{ testRequest }

func (*quietRequest) HasResponse() bool { return false }

func init() {
	RegisterOverride(&quietRequest{}, &testResponse{}, 77)
}

type rawExchangeRequest struct {
	testRequest
	required bool
	saw      map[ApiKey]int16
}

func (r *rawExchangeRequest) Required(v map[ApiKey]int16) bool { r.saw = v; return r.required }

func (r *rawExchangeRequest) RawExchange(rw io.ReadWriter) (Message, error) {
	if _, err := rw.Write([]byte("raw!")); err != nil {
		return nil, err
	}
	b := make([]byte, 3)
	if _, err := io.ReadFull(rw, b); err != nil {
		return nil, err
	}
	return &testResponse{Names: []string{string(b)}}, nil
}

func init() {
	RegisterOverride(&rawExchangeRequest{}, &testResponse{}, 78)
}

type preparedRequest struct {
	testRequest
	prepared []int16
}

func (r *preparedRequest) Prepare(v int16) {
	r.prepared = append(r.prepared, v)
	r.Count = int32(v) * 100
}

func init() {
	RegisterOverride(&preparedRequest{}, &testResponse{}, 79)
}

func TestConn(t *testing.T) {
	client, server := net.Pipe()
	var mu sync.Mutex
	var versions []int16
	var ids []int32
	var counts []int32
	wg := fakeServer(t, server, func(v int16, id int32, cid string, req Message) (int32, Message) {
		mu.Lock()
		versions = append(versions, v)
		ids = append(ids, id)
		counts = append(counts, req.(*testRequest).Count)
		mu.Unlock()
		return id, &testResponse{Names: []string{cid}}
	})
	c := NewConn(client, "conn-client")
	if !strings.HasPrefix(c.String(), "kafka://conn-client@") {
		t.Fatalf("String() = %q", c.String())
	}

	// No version set: the highest registered one.
	res, err := c.RoundTrip(&testRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if res.(*testResponse).Names[0] != "conn-client" {
		t.Fatalf("res = %+v", res)
	}
	vs := map[ApiKey]int16{testKey: 1}
	c.SetVersions(vs)
	vs[testKey] = 3 // SetVersions keeps a copy
	p := &preparedRequest{}
	if _, err := c.RoundTrip(p); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p.prepared, []int16{1}) {
		t.Fatalf("Prepare calls: %v", p.prepared)
	}

	// RawExchanger not required: a normal round trip.
	rx := &rawExchangeRequest{}
	if _, err := c.RoundTrip(rx); err != nil {
		t.Fatal(err)
	}
	if rx.saw[testKey] != 1 {
		t.Fatalf("Required got %v", rx.saw)
	}
	c.Close()
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	if !reflect.DeepEqual(versions, []int16{3, 1, 1}) {
		t.Fatalf("versions %v", versions)
	}
	if !reflect.DeepEqual(ids, []int32{1, 2, 3}) {
		t.Fatalf("correlation ids %v", ids)
	}
	if counts[1] != 100 {
		t.Fatalf("prepared request sent Count=%d", counts[1])
	}
}

func TestConnRawExchange(t *testing.T) {
	client, server := net.Pipe()
	defer client.Close()
	go func() {
		defer server.Close()
		b := make([]byte, 4)
		if _, err := io.ReadFull(server, b); err != nil || string(b) != "raw!" {
			t.Errorf("server read %q, %v", b, err)
			return
		}
		server.Write([]byte("ok!"))
	}()
	c := NewConn(client, "x")
	res, err := c.RoundTrip(&rawExchangeRequest{required: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.(*testResponse).Names[0] != "ok!" {
		t.Fatalf("res = %+v", res)
	}
}

func TestConnDeadline(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	c := NewConn(client, "x")
	defer c.Close()
	go io.Copy(io.Discard, server) // swallow the request, never answer
	c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	_, err := c.RoundTrip(&testRequest{})
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("err = %v", err)
	}
}

func TestConnPeekDiscard(t *testing.T) {
	client, server := net.Pipe()
	defer server.Close()
	c := NewConn(client, "x")
	defer c.Close()
	go server.Write([]byte("abcdef"))
	b, err := c.Peek(3)
	if err != nil || string(b) != "abc" {
		t.Fatalf("Peek: %q %v", b, err)
	}
	if n, err := c.Discard(2); n != 2 || err != nil {
		t.Fatalf("Discard: %d %v", n, err)
	}
	rest := make([]byte, 4)
	if _, err := io.ReadFull(c, rest); err != nil || !bytes.Equal(rest, []byte("cdef")) {
		t.Fatalf("Read: %q %v", rest, err)
	}
}
