package protocol

import "io"

// RoundTrip writes req to rw and, unless req expects no response (a
// Produce request with acks=0), reads the response, whose correlation ID
// must be correlationID.
func RoundTrip(rw io.ReadWriter, apiVersion int16, correlationID int32, clientID string, req Message) (Message, error) {
	if err := WriteRequest(rw, apiVersion, correlationID, clientID, req); err != nil {
		return nil, err
	}
	if !expectsResponse(req) {
		return nil, nil
	}
	id, res, err := ReadResponse(rw, req.ApiKey(), apiVersion)
	if err != nil {
		return nil, err
	}
	if id != correlationID {
		return nil, Errorf("correlation id mismatch (expected=%d, found=%d)", correlationID, id)
	}
	return res, nil
}

type responseExpecter interface{ HasResponse() bool }

func expectsResponse(req Message) bool {
	r, ok := req.(responseExpecter)
	return !ok || r.HasResponse()
}
