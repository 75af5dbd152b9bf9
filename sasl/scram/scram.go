// Package scram implements the SASL SCRAM-SHA-256 and SCRAM-SHA-512
// mechanisms (RFC 5802, RFC 7677), supported by Kafka since 0.10.2.
package scram

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"hash"

	"github.com/segmentio/kafka-go/sasl"
	"github.com/xdg-go/scram"
)

// Algorithm is the hash function SCRAM is run with.
type Algorithm interface {
	// Name is the SASL mechanism name, e.g. "SCRAM-SHA-256".
	Name() string
	// Hash returns a new instance of the hash function.
	Hash() hash.Hash
}

// algorithm is an integer so that Algorithm values stay comparable (users
// may test algo == scram.SHA256).
type algorithm int

const (
	algoSHA256 algorithm = iota + 1
	algoSHA512
)

func (a algorithm) Name() string {
	if a == algoSHA512 {
		return "SCRAM-SHA-512"
	}
	return "SCRAM-SHA-256"
}

func (a algorithm) Hash() hash.Hash {
	if a == algoSHA512 {
		return sha512.New()
	}
	return sha256.New()
}

var (
	// SHA256 selects SCRAM-SHA-256.
	SHA256 Algorithm = algoSHA256
	// SHA512 selects SCRAM-SHA-512.
	SHA512 Algorithm = algoSHA512
)

// Mechanism returns a sasl.Mechanism authenticating as username with
// password using SCRAM over algo. It fails when the credentials cannot be
// normalised with SASLprep (RFC 4013).
func Mechanism(algo Algorithm, username, password string) (sasl.Mechanism, error) {
	return newMechanism(algo, username, password, nil)
}

// newMechanism lets tests replace the random client nonce.
func newMechanism(algo Algorithm, username, password string, nonce func() string) (*mechanism, error) {
	client, err := scram.HashGeneratorFcn(algo.Hash).NewClient(username, password, "")
	if err != nil {
		return nil, err
	}
	if nonce != nil {
		client = client.WithNonceGenerator(nonce)
	}
	return &mechanism{algo: algo, client: client}, nil
}

// mechanism is safe for concurrent use: scram.Client guards its key cache,
// and each Start gets its own conversation.
type mechanism struct {
	algo   Algorithm
	client *scram.Client
}

func (m *mechanism) Name() string { return m.algo.Name() }

// Start sends the client-first message.
func (m *mechanism) Start(ctx context.Context) (sasl.StateMachine, []byte, error) {
	conv := m.client.NewConversation()
	first, err := conv.Step("")
	if err != nil {
		return nil, nil, err
	}
	return &exchange{conv: conv}, []byte(first), nil
}

type exchange struct{ conv *scram.ClientConversation }

// Next answers server-first with client-final, then checks the server's
// signature in server-final, which completes the exchange.
func (e *exchange) Next(ctx context.Context, challenge []byte) (bool, []byte, error) {
	resp, err := e.conv.Step(string(challenge))
	if err != nil {
		return false, nil, err
	}
	return e.conv.Done(), []byte(resp), nil
}
