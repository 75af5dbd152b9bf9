package protocol

import (
	"errors"
	"strings"
	"testing"
)

func TestApiKeyString(t *testing.T) {
	for k, want := range map[ApiKey]string{
		Produce: "Produce", InitProducerId: "InitProducerId",
		AlterUserScramCredentials: "AlterUserScramCredentials", ConsumerGroupHeartbeat: "ConsumerGroupHeartbeat",
		1000: "1000", -1: "-1", 52: "52",
	} {
		if got := k.String(); got != want {
			t.Errorf("%d: %q, want %q", int(k), got, want)
		}
	}
}

func TestMinMaxSelectVersion(t *testing.T) {
	if testKey.MinVersion() != 0 || testKey.MaxVersion() != 3 {
		t.Fatalf("range v%d-v%d", testKey.MinVersion(), testKey.MaxVersion())
	}
	if k := ApiKey(999); k.MinVersion() != 0 || k.MaxVersion() != 0 {
		t.Fatal("unregistered API has a range")
	}
	for _, c := range []struct{ min, max, want int16 }{
		{0, 10, 3}, {0, 2, 2}, {0, 3, 3}, {1, 1, 1}, {-5, -1, 0},
	} {
		if got := testKey.SelectVersion(c.min, c.max); got != c.want {
			t.Errorf("SelectVersion(%d, %d) = %d, want %d", c.min, c.max, got, c.want)
		}
	}
}

func TestNegotiateVersion(t *testing.T) {
	v, err := NegotiateVersion(testKey, 1, 9)
	if err != nil || v != 3 {
		t.Fatalf("v%d, %v", v, err)
	}
	v, err = NegotiateVersion(testKey, 0, 2)
	if err != nil || v != 2 {
		t.Fatalf("v%d, %v", v, err)
	}
	_, err = NegotiateVersion(testKey, 4, 7)
	if !errors.Is(err, ErrNoVersionOverlap) {
		t.Fatalf("err = %v", err)
	}
	for _, s := range []string{"1000", "v0-v3", "v4-v7"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%q does not mention %q", err, s)
		}
	}
	if _, err := NegotiateVersion(ApiKey(999), 0, 5); !errors.Is(err, ErrNoVersionOverlap) {
		t.Fatalf("unregistered: %v", err)
	}
}

func TestVersionFloors(t *testing.T) {
	// The floors apply on top of whatever range is registered: a broker
	// that tops out below them cannot be talked to.
	saved := versionFloors
	defer func() { versionFloors = saved }()
	versionFloors = map[ApiKey]int16{testKey: 2}
	if v, err := NegotiateVersion(testKey, 0, 9); err != nil || v != 3 {
		t.Fatalf("v%d %v", v, err)
	}
	if v, err := NegotiateVersion(testKey, 0, 2); err != nil || v != 2 {
		t.Fatalf("v%d %v", v, err)
	}
	_, err := NegotiateVersion(testKey, 0, 1)
	if !errors.Is(err, ErrNoVersionOverlap) || !strings.Contains(err.Error(), "client supports v2-v3") {
		t.Fatalf("err = %v", err)
	}
	if saved[Produce] != 3 || saved[Fetch] != 4 || saved[JoinGroup] != 2 {
		t.Fatalf("floors %v", saved)
	}
}

func TestApiNamesMatchKeys(t *testing.T) {
	if len(apiNames) != numApis {
		t.Fatalf("%d names for %d APIs", len(apiNames), numApis)
	}
	for k, want := range map[ApiKey]string{Produce: "Produce", ApiVersions: "ApiVersions", OffsetDelete: "OffsetDelete", DescribeUserScramCredentials: "DescribeUserScramCredentials"} {
		if k.String() != want {
			t.Errorf("%d: %s", int(k), k)
		}
	}
}
