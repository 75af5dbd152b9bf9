// Package fakecluster holds the kfake settings shared by the standalone
// cluster command (cmd/cluster) and the in-process test helper
// (clustertest), so both behave like the same broker setup.
package fakecluster

import (
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Credentials accepted by the SASL cluster. They are fixed so that tests, the
// docker-compose cluster and the embedded one can all use the same values.
const (
	PlainUser      = "plain-user"
	PlainSecret    = "plain-secret"
	Scram256User   = "scram256-user"
	Scram256Secret = "scram256-secret"
	Scram512User   = "scram512-user"
	Scram512Secret = "scram512-secret"
)

// Default fixed ports used by the standalone command.
var (
	DefaultPorts    = []int{9092, 9093, 9094}
	DefaultSASLPort = 9096
)

// DefaultPartitions mirrors num.partitions=3 in docker-compose.yml.
const DefaultPartitions = 3

// BaseOptions returns the options every cluster gets: auto topic creation
// (kafka-go's Writer relies on it by default) and the partition count that
// the real-Kafka compose file also uses.
func BaseOptions() []kfake.Opt {
	return []kfake.Opt{
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(DefaultPartitions),
	}
}

// SASLOptions turns on SASL and registers one user per mechanism.
// Superuser is used rather than User so that the logins keep working even
// if someone enables ACLs on top.
func SASLOptions() []kfake.Opt {
	return []kfake.Opt{
		kfake.EnableSASL(),
		kfake.Superuser("PLAIN", PlainUser, PlainSecret),
		kfake.Superuser("SCRAM-SHA-256", Scram256User, Scram256Secret),
		kfake.Superuser("SCRAM-SHA-512", Scram512User, Scram512Secret),
	}
}

// DelayProduce makes every Produce request handled by c wait d before the
// cluster processes it normally. SleepControl is used instead of a plain
// sleep so that requests on other connections keep being served while one
// produce is held back.
func DelayProduce(c *kfake.Cluster, d time.Duration) {
	if d <= 0 {
		return
	}
	c.ControlKey(int16(kmsg.Produce), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		c.SleepControl(func() { time.Sleep(d) })
		return nil, nil, false
	})
}
