module github.com/segmentio/kafka-go/bench/clients/upstream

go 1.26.0

require (
	github.com/segmentio/kafka-go/bench/clients/kafkago v0.0.0
	github.com/segmentio/kafka-go/bench/clients/loadgen v0.0.0
)

require (
	github.com/klauspost/compress v1.15.9 // indirect
	github.com/pierrec/lz4/v4 v4.1.15 // indirect
	github.com/segmentio/kafka-go v0.4.51 // indirect
)

replace (
	github.com/segmentio/kafka-go/bench/clients/kafkago => ../kafkago
	github.com/segmentio/kafka-go/bench/clients/loadgen => ../loadgen
)
