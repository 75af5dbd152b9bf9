package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/alteruserscramcredentials"
)

// AlterUserScramCredentialsRequest creates, replaces or deletes SCRAM
// credentials of users.
type AlterUserScramCredentialsRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// Deletions are the credentials to delete.
	Deletions []UserScramCredentialsDeletion

	// Upsertions are the credentials to create or replace.
	Upsertions []UserScramCredentialsUpsertion
}

// ScramMechanism is a SCRAM mechanism, with Kafka's numbering.
type ScramMechanism int8

const (
	// ScramMechanismUnknown is any mechanism this client does not know.
	ScramMechanismUnknown ScramMechanism = iota
	// ScramMechanismSha256 is SCRAM-SHA-256.
	ScramMechanismSha256
	// ScramMechanismSha512 is SCRAM-SHA-512.
	ScramMechanismSha512
)

// UserScramCredentialsDeletion deletes a user's credential for one
// mechanism.
type UserScramCredentialsDeletion struct {
	Name      string
	Mechanism ScramMechanism
}

// UserScramCredentialsUpsertion creates or replaces a user's credential
// for one mechanism. The password never travels: SaltedPassword is the
// SCRAM SaltedPassword (Hi(password, Salt, Iterations)).
type UserScramCredentialsUpsertion struct {
	Name           string
	Mechanism      ScramMechanism
	Iterations     int
	Salt           []byte
	SaltedPassword []byte
}

// AlterUserScramCredentialsResponse is the answer to an
// AlterUserScramCredentialsRequest.
type AlterUserScramCredentialsResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Results has the outcome for each user.
	Results []AlterUserScramCredentialsResponseUser
}

// AlterUserScramCredentialsResponseUser is the outcome for one user.
type AlterUserScramCredentialsResponseUser struct {
	User string
	// Error is nil when the user's credentials were changed.
	Error error
}

// AlterUserScramCredentials changes SCRAM credentials.
func (c *Client) AlterUserScramCredentials(ctx context.Context, req *AlterUserScramCredentialsRequest) (*AlterUserScramCredentialsResponse, error) {
	msg := &alteruserscramcredentials.Request{
		Deletions:  make([]alteruserscramcredentials.RequestUserScramCredentialsDeletion, len(req.Deletions)),
		Upsertions: make([]alteruserscramcredentials.RequestUserScramCredentialsUpsertion, len(req.Upsertions)),
	}
	for i, d := range req.Deletions {
		msg.Deletions[i] = alteruserscramcredentials.RequestUserScramCredentialsDeletion{Name: d.Name, Mechanism: int8(d.Mechanism)}
	}
	for i := range req.Upsertions {
		u := &req.Upsertions[i]
		msg.Upsertions[i] = alteruserscramcredentials.RequestUserScramCredentialsUpsertion{
			Name:           u.Name,
			Mechanism:      int8(u.Mechanism),
			Iterations:     int32(u.Iterations),
			Salt:           u.Salt,
			SaltedPassword: u.SaltedPassword,
		}
	}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).AlterUserScramCredentials: %w", err)
	}
	res := m.(*alteruserscramcredentials.Response)
	out := &AlterUserScramCredentialsResponse{
		Throttle: makeDuration(res.ThrottleTimeMs),
		Results:  make([]AlterUserScramCredentialsResponseUser, len(res.Results)),
	}
	for i, r := range res.Results {
		out.Results[i] = AlterUserScramCredentialsResponseUser{User: r.User, Error: makeError(r.ErrorCode, r.ErrorMessage)}
	}
	return out, nil
}
