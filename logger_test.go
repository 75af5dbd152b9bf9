package kafka

import (
	"fmt"
	"log"
	"strings"
	"testing"
)

func TestLoggerFunc(t *testing.T) {
	var got string
	var l Logger = LoggerFunc(func(format string, args ...interface{}) {
		got = fmt.Sprintf(format, args...)
	})
	l.Printf("partition %d of %s", 3, "topic")
	if got != "partition 3 of topic" {
		t.Fatalf("got %q", got)
	}

	var sb strings.Builder
	l = log.New(&sb, "", 0) // *log.Logger must satisfy Logger
	l.Printf("x=%d", 1)
	if sb.String() != "x=1\n" {
		t.Fatalf("got %q", sb.String())
	}
}
