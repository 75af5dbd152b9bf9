package protocol

// PLACEHOLDER (owned by the protocol-core work): the registry of message
// types. The real implementation parses struct tags here.

// Register records req and res as the request and response types of their API.
func Register(req, res Message) {
	registry[req.ApiKey()] = [2]Message{req, res}
}

// RegisterOverride records an alternative encoding of an API, chosen by
// requests implementing OverrideTypeMessage.
func RegisterOverride(req, res Message, key OverrideTypeKey) {
	overrides[[2]int16{int16(req.ApiKey()), int16(key)}] = [2]Message{req, res}
}

var (
	registry  = map[ApiKey][2]Message{}
	overrides = map[[2]int16][2]Message{}
)
