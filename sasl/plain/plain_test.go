package plain

import (
	"context"
	"testing"

	"github.com/segmentio/kafka-go/sasl"
)

func TestPlain(t *testing.T) {
	var m sasl.Mechanism = Mechanism{Username: "plain-user", Password: "plain-secret"}
	if m.Name() != "PLAIN" {
		t.Fatalf("name %q", m.Name())
	}
	sm, ir, err := m.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := "\x00plain-user\x00plain-secret"; string(ir) != want {
		t.Fatalf("initial response %q, want %q", ir, want)
	}
	done, resp, err := sm.Next(context.Background(), nil)
	if !done || resp != nil || err != nil {
		t.Fatalf("Next = %v, %q, %v", done, resp, err)
	}
}

func TestPlainEmptyAndUnicode(t *testing.T) {
	_, ir, _ := Mechanism{}.Start(context.Background())
	if string(ir) != "\x00\x00" || ir == nil {
		t.Fatalf("empty credentials: %q", ir)
	}
	_, ir, _ = Mechanism{Username: "usér", Password: "pâss wörd"}.Start(context.Background())
	if string(ir) != "\x00usér\x00pâss wörd" {
		t.Fatalf("unicode credentials: %q", ir)
	}
}
