// Package findcoordinator holds the FindCoordinator messages (API key 10),
// which locate the broker coordinating a consumer group or a transaction.
package findcoordinator

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

// Request looks up one coordinator (Key, up to v3) or several
// (CoordinatorKeys, v4+). Prepare moves a single Key into CoordinatorKeys for
// v4+, and the first of CoordinatorKeys into Key below v4.
type Request struct {
	_ struct{} `kafka:"versions=v0-6,flexible=v3"`

	Key             string   `kafka:"v0-3"`
	KeyType         int8     `kafka:"v1+"`
	CoordinatorKeys []string `kafka:"v4+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.FindCoordinator }

func (r *Request) Prepare(apiVersion int16) {
	switch {
	case apiVersion >= 4 && len(r.CoordinatorKeys) == 0 && r.Key != "":
		r.CoordinatorKeys = []string{r.Key}
	case apiVersion < 4 && r.Key == "" && len(r.CoordinatorKeys) > 0:
		r.Key = r.CoordinatorKeys[0]
	}
}

// Response describes the coordinator in its top-level fields up to v3, and
// each requested key's coordinator in Coordinators from v4. Use Coordinator
// to read either form.
type Response struct {
	_ struct{} `kafka:"versions=v0-6,flexible=v3"`

	ThrottleTimeMs int32                 `kafka:"v1+"`
	ErrorCode      int16                 `kafka:"v0-3"`
	ErrorMessage   string                `kafka:"v1-3,nullable"`
	NodeID         int32                 `kafka:"v0-3"`
	Host           string                `kafka:"v0-3"`
	Port           int32                 `kafka:"v0-3"`
	Coordinators   []ResponseCoordinator `kafka:"v4+"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.FindCoordinator }

// ResponseCoordinator is the coordinator of one key (v4+).
type ResponseCoordinator struct {
	Key          string `kafka:"v4+"`
	NodeID       int32  `kafka:"v4+"`
	Host         string `kafka:"v4+"`
	Port         int32  `kafka:"v4+"`
	ErrorCode    int16  `kafka:"v4+"`
	ErrorMessage string `kafka:"v4+,nullable"`
}

// Coordinator returns the coordinator found for key whichever version the
// response was decoded from: the entry of Coordinators for key (or the only
// entry, when there is one), else the top-level fields. ok is false when a
// v4+ response has no entry for key.
func (r *Response) Coordinator(key string) (c ResponseCoordinator, ok bool) {
	if len(r.Coordinators) == 0 {
		return ResponseCoordinator{
			Key:          key,
			NodeID:       r.NodeID,
			Host:         r.Host,
			Port:         r.Port,
			ErrorCode:    r.ErrorCode,
			ErrorMessage: r.ErrorMessage,
		}, true
	}
	for _, c := range r.Coordinators {
		if c.Key == key {
			return c, true
		}
	}
	if len(r.Coordinators) == 1 {
		return r.Coordinators[0], true
	}
	return ResponseCoordinator{}, false
}

var _ protocol.PreparedMessage = (*Request)(nil)
