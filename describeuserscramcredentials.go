package kafka

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/describeuserscramcredentials"
)

// DescribeUserScramCredentialsRequest lists the SCRAM credentials of users
// (the mechanisms and iterations, never secrets).
type DescribeUserScramCredentialsRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// Users are the users to describe; none describes every user.
	Users []UserScramCredentialsUser
}

// UserScramCredentialsUser names a user.
type UserScramCredentialsUser struct {
	Name string
}

// DescribeUserScramCredentialsResponse is the answer to a
// DescribeUserScramCredentialsRequest.
type DescribeUserScramCredentialsResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Error is the error reported for the whole request, nil on success;
	// errors.Is matches it against the Error codes.
	Error error

	// Results has one entry per user.
	Results []DescribeUserScramCredentialsResponseResult
}

// DescribeUserScramCredentialsResponseResult is the credentials of one
// user.
type DescribeUserScramCredentialsResponseResult struct {
	User            string
	CredentialInfos []DescribeUserScramCredentialsCredentialInfo
	// Error is the error describing this user, such as
	// ResourceNotFound for a user without credentials.
	Error error
}

// DescribeUserScramCredentialsCredentialInfo is one credential of a user.
type DescribeUserScramCredentialsCredentialInfo struct {
	Mechanism  ScramMechanism
	Iterations int
}

// DescribeUserScramCredentials lists SCRAM credentials.
func (c *Client) DescribeUserScramCredentials(ctx context.Context, req *DescribeUserScramCredentialsRequest) (*DescribeUserScramCredentialsResponse, error) {
	msg := &describeuserscramcredentials.Request{Users: make([]describeuserscramcredentials.RequestUser, len(req.Users))}
	for i, u := range req.Users {
		msg.Users[i].Name = u.Name
	}

	m, err := c.roundTrip(ctx, req.Addr, msg)
	if err != nil {
		return nil, fmt.Errorf("kafka.(*Client).DescribeUserScramCredentials: %w", err)
	}
	res := m.(*describeuserscramcredentials.Response)
	out := &DescribeUserScramCredentialsResponse{
		Throttle: makeDuration(res.ThrottleTimeMs),
		Error:    makeError(res.ErrorCode, res.ErrorMessage),
		Results:  make([]DescribeUserScramCredentialsResponseResult, len(res.Results)),
	}
	for i, r := range res.Results {
		infos := make([]DescribeUserScramCredentialsCredentialInfo, len(r.CredentialInfos))
		for j, ci := range r.CredentialInfos {
			infos[j] = DescribeUserScramCredentialsCredentialInfo{Mechanism: ScramMechanism(ci.Mechanism), Iterations: int(ci.Iterations)}
		}
		out.Results[i] = DescribeUserScramCredentialsResponseResult{
			User:            r.User,
			CredentialInfos: infos,
			Error:           makeError(r.ErrorCode, r.ErrorMessage),
		}
	}
	return out, nil
}
