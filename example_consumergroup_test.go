package kafka_test

import (
	"context"
	"errors"
	"log"

	"github.com/segmentio/kafka-go"
)

// Each generation of the group hands this member some partitions; one
// goroutine per partition reads it from the group's offset and commits as
// it goes, until the generation ends (another member joined or left).
func ExampleGeneration_Start_consumerGroupParallelReaders() {
	brokers := []string{"localhost:9092"}
	const topic = "events"

	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{ID: "event-processors", Brokers: brokers, Topics: []string{topic}})
	if err != nil {
		log.Fatalf("consumer group: %v", err)
	}
	defer cg.Close()

	readPartition := func(gen *kafka.Generation, a kafka.PartitionAssignment) {
		gen.Start(func(ctx context.Context) {
			r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: a.ID})
			defer r.Close()
			if err := r.SetOffset(a.Offset); err != nil {
				return
			}
			for {
				m, err := r.FetchMessage(ctx)
				switch {
				case errors.Is(err, kafka.ErrGenerationEnded), ctx.Err() != nil:
					return // the partition may now belong to another member
				case err != nil:
					log.Printf("partition %d: %v", a.ID, err)
					return
				}
				log.Printf("%s[%d]@%d: %s", m.Topic, m.Partition, m.Offset, m.Value)
				next := map[string]map[int]int64{topic: {a.ID: m.Offset + 1}}
				if err := gen.CommitOffsets(next); err != nil {
					return
				}
			}
		})
	}

	for {
		gen, err := cg.Next(context.Background())
		if err != nil {
			return // ErrGroupClosed after Close
		}
		for _, a := range gen.Assignments[topic] {
			readPartition(gen, a)
		}
	}
}

// CommitOffsets can also move a group's position, here back to the start
// of partitions 0 and 1 (a committed offset is that of the next message to
// read).
func ExampleGeneration_CommitOffsets_overwriteOffsets() {
	cg, err := kafka.NewConsumerGroup(kafka.ConsumerGroupConfig{
		ID:      "event-processors",
		Brokers: []string{"localhost:9092"},
		Topics:  []string{"events"},
	})
	if err != nil {
		log.Fatalf("consumer group: %v", err)
	}
	defer cg.Close()

	gen, err := cg.Next(context.Background())
	if err != nil {
		log.Fatalf("joining: %v", err)
	}
	rewind := map[string]map[int]int64{"events": {0: 0, 1: 0}}
	if err := gen.CommitOffsets(rewind); err != nil {
		log.Fatalf("committing: %v", err)
	}
}
