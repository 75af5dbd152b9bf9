module github.com/segmentio/kafka-go/bench/clients/loadgen

go 1.26.0
