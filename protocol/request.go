package protocol

import "io"

// WriteRequest writes msg to w as one request frame of version apiVersion,
// with request header v1, or v2 when the version is flexible.
func WriteRequest(w io.Writer, apiVersion int16, correlationID int32, clientID string, msg Message) error {
	mt, err := currentRegistry().encodeType(msg)
	if err != nil {
		return err
	}
	c, err := mt.codecFor(apiVersion)
	if err != nil {
		return err
	}
	if len(clientID) > 1<<15-1 {
		return errStringTooLong
	}
	hdr := frameHeader{
		request:       true,
		tagged:        mt.flexible(apiVersion),
		key:           msg.ApiKey(),
		version:       apiVersion,
		correlationID: correlationID,
		clientID:      clientID,
	}
	return encodeFrame(w, c, msg, &hdr)
}

// ReadRequest reads one request frame from r, the server side of
// WriteRequest.
func ReadRequest(r io.Reader) (apiVersion int16, correlationID int32, clientID string, msg Message, err error) {
	_, frame, err := readFrame(r)
	if err != nil {
		return 0, 0, "", nil, err
	}
	rd := wireReader{b: frame}
	key := ApiKey(rd.int16())
	apiVersion = rd.int16()
	correlationID = rd.int32()
	if n := int(rd.int16()); n > 0 {
		clientID = string(rd.take(n))
	}
	if rd.err != nil {
		return apiVersion, correlationID, clientID, nil, rd.err
	}
	types, ok := currentRegistry().apis[key]
	if !ok {
		return apiVersion, correlationID, clientID, nil, unsupportedAPI(key)
	}
	c, err := types.req.codecFor(apiVersion)
	if err != nil {
		return apiVersion, correlationID, clientID, nil, err
	}
	if types.req.flexible(apiVersion) {
		skipTaggedFields(&rd)
	}
	msg = types.req.newMessage()
	if rd.err == nil {
		c.decode(&rd, messageValue(msg))
	}
	if rd.err != nil {
		return apiVersion, correlationID, clientID, nil, decodeError(rd.err, "request", key, apiVersion)
	}
	return apiVersion, correlationID, clientID, msg, nil
}
