// Package apiversions holds the ApiVersions messages (API key 18), which a
// client sends first on every connection to learn the version range of each
// API the broker implements.
package apiversions

import "github.com/segmentio/kafka-go/protocol"

func init() {
	protocol.Register(&Request{}, &Response{})
}

type Request struct {
	_ struct{} `kafka:"versions=v0-4,flexible=v3"`

	// Brokers use these two fields for metrics only; they are sent from v3.
	ClientSoftwareName    string `kafka:"v3+"`
	ClientSoftwareVersion string `kafka:"v3+"`
}

func (r *Request) ApiKey() protocol.ApiKey { return protocol.ApiVersions }

// What Prepare sends when the caller names no client software. Brokers
// check both against [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])? from v3 on
// and answer INVALID_REQUEST to an empty one.
const (
	defaultSoftwareName    = "segmentio-kafka-go"
	defaultSoftwareVersion = "0.4.51"
)

// Prepare fills the client software fields left empty when the version has
// them: callers written against upstream's API (which stops at v2) never set
// them.
func (r *Request) Prepare(apiVersion int16) {
	if apiVersion < 3 {
		return
	}
	if r.ClientSoftwareName == "" {
		r.ClientSoftwareName = defaultSoftwareName
	}
	if r.ClientSoftwareVersion == "" {
		r.ClientSoftwareVersion = defaultSoftwareVersion
	}
}

var _ protocol.PreparedMessage = (*Request)(nil)

type Response struct {
	_ struct{} `kafka:"versions=v0-4,flexible=v3"`

	ErrorCode      int16            `kafka:"v0+"`
	ApiKeys        []ApiKeyResponse `kafka:"v0+"`
	ThrottleTimeMs int32            `kafka:"v1+"`

	// Tagged fields (v3+). Each is left out of the encoding when it holds its
	// default and takes the default when absent: zero (empty, false) for all
	// but FinalizedFeaturesEpoch, whose default is -1 (unknown epoch).
	SupportedFeatures      []SupportedFeature `kafka:"v3+,tag=0"`
	FinalizedFeaturesEpoch int64              `kafka:"v3+,tag=1,default=-1"`
	FinalizedFeatures      []FinalizedFeature `kafka:"v3+,tag=2"`
	ZkMigrationReady       bool               `kafka:"v3+,tag=3"`
}

func (r *Response) ApiKey() protocol.ApiKey { return protocol.ApiVersions }

type ApiKeyResponse struct {
	ApiKey     int16 `kafka:"v0+"`
	MinVersion int16 `kafka:"v0+"`
	MaxVersion int16 `kafka:"v0+"`
}

// SupportedFeature is a feature flag range a broker supports (v3+).
type SupportedFeature struct {
	Name       string `kafka:"v3+"`
	MinVersion int16  `kafka:"v3+"`
	MaxVersion int16  `kafka:"v3+"`
}

// FinalizedFeature is a feature level agreed on cluster-wide (v3+).
type FinalizedFeature struct {
	Name            string `kafka:"v3+"`
	MaxVersionLevel int16  `kafka:"v3+"`
	MinVersionLevel int16  `kafka:"v3+"`
}
