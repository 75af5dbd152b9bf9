package loadgen

// Result is what a load generator prints, as one JSON object on the last
// line of its standard output. The bench tool decodes it and adds the
// figures only the parent can measure (CPU time and peak RSS of the child,
// broker CPU).
type Result struct {
	Client      string `json:"client"`
	Scenario    string `json:"scenario"`
	Messages    int    `json:"messages"` // requested
	Size        int    `json:"size"`
	Compression string `json:"compression"`
	Settings    string `json:"settings"`
	// OfferedRate is the slow scenario's pacing in messages per second.
	OfferedRate int `json:"offered_rate,omitempty"`

	// Produced counts the messages the client accepted (the produce call
	// returned); Acked and Failed those it reported as written or failed.
	Produced   int64  `json:"produced"`
	Acked      int64  `json:"acked"`
	Failed     int64  `json:"failed"`
	FirstError string `json:"first_error,omitempty"`

	// ElapsedSec is the measured window: for throughput, from the first
	// produce call until every message is acknowledged; for the slow broker,
	// the sampling window.
	ElapsedSec float64 `json:"elapsed_sec"`

	// LatenciesUS holds one entry per timed synchronous write.
	LatenciesUS []float64 `json:"latencies_us,omitempty"`

	// Samples is the heap and buffered-message series (slow broker only);
	// the peaks are kept for every scenario.
	// Consumer scenarios: Acked is how far the topic was read (the sum of
	// each partition's highest offset + 1), Produced how many messages were
	// delivered (more when a message was read twice); ElapsedSec runs
	// from the first message to the last. ReadCPUSec is the process's CPU
	// time when the last message was read (start-up included, the
	// rebalance phase that follows not). FirstMessageMs is the time from
	// creating the consumer to its first message; RebalanceMs the time from
	// creating a second member of the group to its first message.
	ReadCPUSec     float64 `json:"read_cpu_sec,omitempty"`
	FirstMessageMs float64 `json:"first_message_ms,omitempty"`
	RebalanceMs    float64 `json:"rebalance_ms,omitempty"`
	RebalanceError string  `json:"rebalance_error,omitempty"`

	// Idle scenario: FirstAckMs is the time from creating the producer to
	// the acknowledgement of its first message; IdleCPUSec the process's
	// CPU time over the idle window (ElapsedSec long), IdleRSSBytes its
	// resident set at the end of it.
	FirstAckMs   float64 `json:"first_ack_ms,omitempty"`
	IdleCPUSec   float64 `json:"idle_cpu_sec,omitempty"`
	IdleRSSBytes int64   `json:"idle_rss_bytes,omitempty"`

	Samples       []Sample `json:"samples,omitempty"`
	PeakHeapBytes uint64   `json:"peak_heap_bytes"`
	PeakBuffered  int64    `json:"peak_buffered"`
	// PeakGoroutines and PeakSockets are the most goroutines and open
	// sockets (connections) the sampler saw.
	PeakGoroutines int `json:"peak_goroutines,omitempty"`
	PeakSockets    int `json:"peak_sockets,omitempty"`
}

// Sample is one point of the heap series.
type Sample struct {
	TMs       float64 `json:"t_ms"`
	HeapBytes uint64  `json:"heap_bytes"`
	Buffered  int64   `json:"buffered"`
	// Acked is the running count of acknowledged messages, which shows
	// stalls (no progress while messages are buffered).
	Acked int64 `json:"acked"`
}
