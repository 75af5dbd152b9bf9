package kafka

import (
	"bufio"
	"context"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/sasl"
)

// negotiateConn runs on nc, a connection the caller opened (and wrapped in
// TLS when needed), the setup the Transport runs on its own connections:
// ApiVersions at our highest version (falling back to the broker's when it
// does not know it), then, when mech is not nil, SaslHandshake and the
// mechanism's exchange. It is meant for Conn, which owns its connection.
//
// It returns the version to use for each API usable with the broker, the
// reason each other API the broker advertises is not usable, and the
// broker's advertised ranges. The exchanges are bounded by ctx; nc keeps no
// deadline afterwards. Nothing is left buffered: the caller may go on
// reading nc directly.
func negotiateConn(ctx context.Context, nc net.Conn, clientID string, mech sasl.Mechanism) (
	versions map[protocol.ApiKey]int16, unusable map[protocol.ApiKey]error, ranges map[protocol.ApiKey][2]int16, err error) {
	if d, ok := ctx.Deadline(); ok {
		nc.SetDeadline(d)
	}
	release := interruptOnDone(ctx, func() { nc.SetDeadline(time.Unix(1, 0)) })
	defer func() {
		if release() && err == nil {
			err = ctx.Err()
		}
		nc.SetDeadline(time.Time{})
	}()

	address := nc.RemoteAddr().String()
	// A small buffer is enough: every read stops at the end of a response,
	// and the broker sends nothing unasked.
	hs := &handshake{nc: nc, br: bufio.NewReaderSize(nc, 4096), clientID: clientID, address: address}
	if err := hs.negotiate(); err != nil {
		return nil, nil, nil, ctxError(ctx, err)
	}
	if mech != nil {
		host, port := splitAddress(address)
		if err := hs.authenticate(sasl.WithMetadata(ctx, &sasl.Metadata{Host: host, Port: port}), mech); err != nil {
			return nil, nil, nil, ctxError(ctx, err)
		}
	}
	return hs.versions, hs.unusable, hs.ranges, nil
}
