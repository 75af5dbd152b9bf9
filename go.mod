module github.com/segmentio/kafka-go

go 1.23

require (
	github.com/klauspost/compress v1.18.4
	github.com/pierrec/lz4/v4 v4.1.33
	github.com/stretchr/testify v1.12.1
	github.com/xdg-go/scram v1.3.0
)

require (
	github.com/xdg-go/pbkdf2 v1.0.0 // indirect
	github.com/xdg-go/stringprep v1.0.4 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/text v0.3.8 // indirect
)
