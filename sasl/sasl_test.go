package sasl_test

import (
	"context"
	"testing"

	"github.com/segmentio/kafka-go/sasl"
)

func TestMetadataContext(t *testing.T) {
	ctx := context.Background()
	if m := sasl.MetadataFromContext(ctx); m != nil {
		t.Fatalf("unexpected metadata %+v", m)
	}
	want := &sasl.Metadata{Host: "broker-1.example", Port: 9096}
	ctx = sasl.WithMetadata(ctx, want)
	// Unrelated values layered on top do not hide it.
	type other struct{}
	ctx = context.WithValue(ctx, other{}, "x")
	if got := sasl.MetadataFromContext(ctx); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	// A string key of any spelling cannot collide with the package's key.
	//lint:ignore SA1029 a plain string key, as a careless caller would use, is the point of this check
	if got := sasl.MetadataFromContext(context.WithValue(context.Background(), "metadata", want)); got != nil {
		t.Fatalf("found metadata under a foreign key")
	}
	if got := sasl.MetadataFromContext(sasl.WithMetadata(context.Background(), nil)); got != nil {
		t.Fatalf("nil metadata came back as %+v", got)
	}
}
