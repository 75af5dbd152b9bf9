module github.com/segmentio/kafka-go/bench

go 1.26.0

require github.com/segmentio/kafka-go/bench/clients/loadgen v0.0.0

replace github.com/segmentio/kafka-go/bench/clients/loadgen => ./clients/loadgen
