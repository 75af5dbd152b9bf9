package saslauthenticate_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/prototest"
	"github.com/segmentio/kafka-go/protocol/saslauthenticate"
)

func TestSaslAuthenticateRoundTrip(t *testing.T) {
	prototest.TestRequest(t, 0, &saslauthenticate.Request{AuthBytes: []byte("\x00user\x00pass")})
	prototest.TestRequest(t, 1, &saslauthenticate.Request{AuthBytes: []byte("n,,n=user,r=nonce")})
	prototest.TestRequest(t, 2, &saslauthenticate.Request{AuthBytes: []byte("n,,n=user,r=nonce")})

	prototest.TestResponse(t, 0, &saslauthenticate.Response{ErrorCode: 58, ErrorMessage: "bad", AuthBytes: []byte{}})
	prototest.TestResponse(t, 1, &saslauthenticate.Response{AuthBytes: []byte("r=nonce2"), SessionLifetimeMs: 3600000})
	prototest.TestResponse(t, 2, &saslauthenticate.Response{AuthBytes: []byte("v=sig"), SessionLifetimeMs: 3600000})
}

type pipe struct {
	in  *bytes.Reader
	out bytes.Buffer
}

func (p *pipe) Read(b []byte) (int, error)  { return p.in.Read(b) }
func (p *pipe) Write(b []byte) (int, error) { return p.out.Write(b) }

func TestSaslAuthenticateRawExchange(t *testing.T) {
	req := &saslauthenticate.Request{AuthBytes: []byte("token")}
	if !req.Required(map[protocol.ApiKey]int16{protocol.SaslHandshake: 0}) {
		t.Error("a v0 handshake must use the raw exchange")
	}
	if req.Required(map[protocol.ApiKey]int16{protocol.SaslHandshake: 1}) {
		t.Error("a v1 handshake must use SaslAuthenticate requests")
	}

	p := &pipe{in: bytes.NewReader([]byte{0, 0, 0, 3, 'a', 'c', 'k', 'X'})}
	res, err := req.RawExchange(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0, 0, 0, 5, 't', 'o', 'k', 'e', 'n'}; !bytes.Equal(p.out.Bytes(), want) {
		t.Errorf("sent % x, want % x", p.out.Bytes(), want)
	}
	if got := res.(*saslauthenticate.Response).AuthBytes; string(got) != "ack" {
		t.Errorf("received %q", got)
	}

	// An empty token from the broker is not a missing one.
	res, err = req.RawExchange(&pipe{in: bytes.NewReader([]byte{0, 0, 0, 0})})
	if err != nil || res.(*saslauthenticate.Response).AuthBytes == nil {
		t.Errorf("empty token: %+v, %v", res, err)
	}

	// A truncated or hostile size fails without allocating the announced size.
	if _, err := req.RawExchange(&pipe{in: bytes.NewReader([]byte{0x7f, 0xff, 0xff, 0xff, 1})}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated token: error %v", err)
	}
	if _, err := req.RawExchange(&pipe{in: bytes.NewReader(binary.BigEndian.AppendUint32(nil, 0xffffffff))}); err == nil {
		t.Error("negative token size accepted")
	}
	if _, err := req.RawExchange(&pipe{in: bytes.NewReader([]byte{0, 0})}); err == nil {
		t.Error("truncated size accepted")
	}
}
