module github.com/segmentio/kafka-go/bench/clients/fork

go 1.26.0

require (
	github.com/segmentio/kafka-go v0.4.51
	github.com/segmentio/kafka-go/bench/clients/kafkago v0.0.0
	github.com/segmentio/kafka-go/bench/clients/loadgen v0.0.0
)

// klauspost/compress at the version franz-go's load generator builds with
// (see ../../README.md, "Compression library").
require (
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/pierrec/lz4/v4 v4.1.33 // indirect
)

replace (
	github.com/segmentio/kafka-go => ../../..
	github.com/segmentio/kafka-go/bench/clients/kafkago => ../kafkago
	github.com/segmentio/kafka-go/bench/clients/loadgen => ../loadgen
)
