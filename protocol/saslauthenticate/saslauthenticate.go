// Package saslauthenticate holds the SaslAuthenticate messages (API key 36),
// which carry SASL tokens once a mechanism was chosen with SaslHandshake v1.
package saslauthenticate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/segmentio/kafka-go/protocol"
)

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-2,flexible=v2"`

	AuthBytes []byte `kafka:"v0+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.SaslAuthenticate }

// Required reports whether the token must go raw on the connection: that is
// the case when the handshake was done with SaslHandshake v0.
func (*Request) Required(versions map[protocol.ApiKey]int16) bool {
	return versions[protocol.SaslHandshake] == 0
}

// RawExchange sends AuthBytes as a bare size-prefixed token and reads the
// broker's token back the same way (the SASL framing of SaslHandshake v0).
func (r *Request) RawExchange(rw io.ReadWriter) (protocol.Message, error) {
	out := make([]byte, 4+len(r.AuthBytes))
	binary.BigEndian.PutUint32(out, uint32(len(r.AuthBytes)))
	copy(out[4:], r.AuthBytes)
	if _, err := rw.Write(out); err != nil {
		return nil, err
	}

	var size [4]byte
	if _, err := io.ReadFull(rw, size[:]); err != nil {
		if errors.Is(err, io.EOF) {
			// The token was sent: an answer is owed, so the end of the
			// stream here is unexpected.
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 0 {
		return nil, fmt.Errorf("saslauthenticate: negative token size %d", n)
	}
	// Grow the buffer as bytes arrive rather than trusting the announced
	// size up front.
	var token bytes.Buffer
	if _, err := io.CopyN(&token, rw, int64(n)); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	auth := token.Bytes()
	if auth == nil {
		auth = []byte{} // an empty token, not a missing one
	}
	return &Response{AuthBytes: auth}, nil
}

type Response struct {
	_ struct{} `kafka:"versions=v0-2,flexible=v2"`

	ErrorCode         int16  `kafka:"v0+"`
	ErrorMessage      string `kafka:"v0+,nullable"`
	AuthBytes         []byte `kafka:"v0+"`
	SessionLifetimeMs int64  `kafka:"v1+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.SaslAuthenticate }

var _ protocol.RawExchanger = (*Request)(nil)
