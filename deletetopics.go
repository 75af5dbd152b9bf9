package kafka

import (
	"context"
	"net"
	"time"

	"github.com/segmentio/kafka-go/protocol/deletetopics"
)

// DeleteTopicsRequest asks the cluster to delete topics.
type DeleteTopicsRequest struct {
	// Addr is the address of the cluster; Client.Addr is used when nil.
	Addr net.Addr

	// Topics are the names of the topics to delete.
	Topics []string
}

// DeleteTopicsResponse is the answer to a DeleteTopicsRequest.
type DeleteTopicsResponse struct {
	// Throttle is how long the broker throttled the request.
	Throttle time.Duration

	// Errors maps every topic of the request to the error deleting it, nil
	// on success.
	Errors map[string]error
}

// DeleteTopics deletes topics.
func (c *Client) DeleteTopics(ctx context.Context, req *DeleteTopicsRequest) (*DeleteTopicsResponse, error) {
	m, err := c.roundTrip(ctx, req.Addr, &deletetopics.Request{
		TimeoutMs:  c.timeoutMs(ctx, defaultTopicAdminTimeout),
		TopicNames: req.Topics,
	})
	if err != nil {
		return nil, clientError("DeleteTopics", err)
	}
	res := m.(*deletetopics.Response)
	errs := make(map[string]error, len(res.Responses))
	for _, topic := range res.Responses {
		// Only the code: the original client drops the broker's message.
		errs[topic.Name] = makeError(topic.ErrorCode, "")
	}
	return &DeleteTopicsResponse{Throttle: makeDuration(res.ThrottleTimeMs), Errors: errs}, nil
}
