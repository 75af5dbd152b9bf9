package protocol

import (
	"errors"
	"fmt"
	"io"
)

// WriteResponse writes msg to w as one response frame of version
// apiVersion, with response header v0, or v1 when the version is flexible
// (ApiVersions responses always use v0).
func WriteResponse(w io.Writer, apiVersion int16, correlationID int32, msg Message) error {
	mt, err := currentRegistry().encodeType(msg)
	if err != nil {
		return err
	}
	c, err := mt.codecFor(apiVersion)
	if err != nil {
		return err
	}
	hdr := frameHeader{
		tagged:        responseHeaderFlexible(msg.ApiKey(), mt.flexible(apiVersion)),
		correlationID: correlationID,
	}
	return encodeFrame(w, c, msg, &hdr)
}

// ReadResponse reads one response frame of API apiKey at version apiVersion
// from r.
func ReadResponse(r io.Reader, apiKey ApiKey, apiVersion int16) (correlationID int32, msg Message, err error) {
	types, ok := currentRegistry().apis[apiKey]
	if !ok {
		return 0, nil, unsupportedAPI(apiKey)
	}
	c, err := types.res.codecFor(apiVersion)
	if err != nil {
		return 0, nil, err
	}
	size, frame, err := readFrame(r)
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) && looksLikeTLS(size) {
			err = fmt.Errorf("%w: broker appears to be expecting TLS", io.ErrUnexpectedEOF)
		}
		return 0, nil, err
	}
	rd := wireReader{b: frame, owned: true}
	correlationID = rd.int32()
	if responseHeaderFlexible(apiKey, types.res.flexible(apiVersion)) {
		skipTaggedFields(&rd)
	}
	msg = types.res.newMessage()
	if rd.err == nil {
		c.decode(&rd, messageValue(msg))
	}
	if rd.err != nil {
		return correlationID, nil, decodeError(rd.err, "response", apiKey, apiVersion)
	}
	return correlationID, msg, nil
}

// decodeError adds context to a decoding error, except for a truncated
// frame, which is reported as the bare io.ErrUnexpectedEOF that callers
// have always compared against.
func decodeError(err error, what string, key ApiKey, v int16) error {
	if err == io.ErrUnexpectedEOF {
		return err
	}
	return fmt.Errorf("decoding %s v%d %s: %w", key, v, what, err)
}
