// Package topics is an experimental package with helpers around the topics
// of a kafka cluster. Its API may change.
package topics

import (
	"context"
	"errors"
	"regexp"

	"github.com/segmentio/kafka-go"
)

// List returns all the topics of the cluster the client talks to.
func List(ctx context.Context, client *kafka.Client) (topics []kafka.Topic, err error) {
	if client == nil {
		return nil, errors.New("client is required")
	}
	res, err := client.Metadata(ctx, &kafka.MetadataRequest{Addr: client.Addr})
	if err != nil {
		return nil, err
	}
	return res.Topics, nil
}

// ListRe returns the topics of the cluster whose name matches re.
func ListRe(ctx context.Context, cli *kafka.Client, re *regexp.Regexp) (topics []kafka.Topic, err error) {
	all, err := List(ctx, cli)
	if err != nil {
		return nil, err
	}
	for _, t := range all {
		if re.MatchString(t.Name) {
			topics = append(topics, t)
		}
	}
	return topics, nil
}
