// Package topics is an experimental package with helpers around the topics
// of a kafka cluster. Its API may change.
package topics

import (
	"context"
	"errors"
	"regexp"
	"slices"

	"github.com/segmentio/kafka-go"
)

// List returns all the topics of the cluster the client talks to.
func List(ctx context.Context, client *kafka.Client) (topics []kafka.Topic, err error) {
	if client == nil {
		return nil, errors.New("client is required")
	}
	var md *kafka.MetadataResponse
	if md, err = client.Metadata(ctx, &kafka.MetadataRequest{Addr: client.Addr}); err == nil {
		topics = md.Topics
	}
	return topics, err
}

// ListRe returns the topics of the cluster whose name matches re.
func ListRe(ctx context.Context, cli *kafka.Client, re *regexp.Regexp) (topics []kafka.Topic, err error) {
	if topics, err = List(ctx, cli); err != nil {
		return nil, err
	}
	topics = slices.DeleteFunc(topics, func(t kafka.Topic) bool { return !re.MatchString(t.Name) })
	if len(topics) == 0 {
		topics = nil // as before: no match is a nil slice
	}
	return topics, nil
}
