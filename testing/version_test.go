package testing

import "testing"

func TestVersionAtLeast(t *testing.T) {
	tests := []struct {
		v, other string
		want     bool
	}{
		{"", "1.2", false},
		{"", "0", true},
		{"", "0.0.0", true},
		{"1.1", "1.1.2", false},
		{"1.1", "1.1.0", true},
		{"1.1.0", "1.1", true},
		{"2.0.1", "2.0.1", true},
		{"2.0.1", "2.0.2", false},
		{"3.0.0", "2.7.0", true},
		{"2.10.0", "2.9.0", true},
		{"0.11.0", "2.0.0", false},
		{"4.0", "3.9.1", true},
	}
	for _, tt := range tests {
		if got := parseVersion(tt.v).atLeast(parseVersion(tt.other)); got != tt.want {
			t.Errorf("%q at least %q = %v, want %v", tt.v, tt.other, got, tt.want)
		}
	}
}

func TestParseVersionPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("expected a panic")
		}
	}()
	parseVersion("1.x")
}

func TestKafkaIsAtLeastFollowsEnv(t *testing.T) {
	saved := kafkaVersion
	defer func() { kafkaVersion = saved }()
	kafkaVersion = parseVersion("3.7.0")
	if !KafkaIsAtLeast("3.7") || !KafkaIsAtLeast("2.0.1") || KafkaIsAtLeast("3.8.0") {
		t.Fatal("KafkaIsAtLeast with KAFKA_VERSION=3.7.0")
	}
}
