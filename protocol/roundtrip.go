package protocol

import "io"

// RoundTrip writes req to rw and, unless req expects no response (a
// Produce request with acks=0), reads the response, whose correlation ID
// must be correlationID.
func RoundTrip(rw io.ReadWriter, apiVersion int16, correlationID int32, clientID string, req Message) (Message, error) {
	err := WriteRequest(rw, apiVersion, correlationID, clientID, req)
	if err != nil || !expectsResponse(req) {
		return nil, err
	}
	gotID, res, err := ReadResponse(rw, req.ApiKey(), apiVersion)
	switch {
	case err != nil:
		return nil, err
	case gotID != correlationID:
		return nil, Errorf("correlation id mismatch (expected=%d, found=%d)", correlationID, gotID)
	}
	return res, nil
}

type responseExpecter interface{ HasResponse() bool }

func expectsResponse(req Message) bool {
	r, ok := req.(responseExpecter)
	return !ok || r.HasResponse()
}
