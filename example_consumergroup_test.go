package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/segmentio/kafka-go"
)

// Each generation of the group hands this member some partitions; one
// goroutine per partition reads it from the group's offset and commits as
// it goes, until the generation ends (another member joined or left).
func ExampleGeneration_Start_consumerGroupParallelReaders() {
	group, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID:      "my-group",
		Brokers: []string{"kafka:9092"},
		Topics:  []string{"my-topic"},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "error creating consumer group: %+v\n", err)
		os.Exit(1)
	}
	defer group.Close()

	for {
		gen, err := group.Next(context.TODO())
		if err != nil {
			break
		}
		for _, assignment := range gen.Assignments["my-topic"] {
			partition, offset := assignment.ID, assignment.Offset
			gen.Start(func(ctx context.Context) {
				r := kafka.NewReader(kafka.ReaderConfig{
					Brokers:   []string{"kafka:9092"},
					Topic:     "my-topic",
					Partition: partition,
				})
				defer r.Close()
				if err := r.SetOffset(offset); err != nil {
					return
				}
				for {
					msg, err := r.ReadMessage(ctx)
					if errors.Is(err, kafka.ErrGenerationEnded) || ctx.Err() != nil {
						return // the next generation takes over
					}
					if err != nil {
						fmt.Printf("error reading partition %d: %+v\n", partition, err)
						return
					}
					fmt.Printf("received message %s/%d/%d : %s\n", msg.Topic, msg.Partition, msg.Offset, string(msg.Value))
					if err := gen.CommitOffsets(map[string]map[int]int64{"my-topic": {partition: msg.Offset + 1}}); err != nil {
						return
					}
				}
			})
		}
	}
}

// CommitOffsets can also move a group's position, here back to the start
// of partitions 0 and 1 (committed offsets are those of the next message
// to read).
func ExampleGeneration_CommitOffsets_overwriteOffsets() {
	group, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID:      "my-group",
		Brokers: []string{"kafka:9092"},
		Topics:  []string{"my-topic"},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "error creating consumer group: %+v\n", err)
		os.Exit(1)
	}
	defer group.Close()

	gen, err := group.Next(context.TODO())
	if err != nil {
		fmt.Fprintf(os.Stderr, "error getting next generation: %+v\n", err)
		os.Exit(1)
	}
	err = gen.CommitOffsets(map[string]map[int]int64{
		"my-topic": {0: 0, 1: 0},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "error committing offsets: %+v\n", err)
		os.Exit(1)
	}
}
