package offsetfetch_test

import (
	"reflect"
	"testing"

	"github.com/segmentio/kafka-go/protocol/offsetfetch"
	"github.com/segmentio/kafka-go/protocol/prototest"
)

func TestOffsetFetchRoundTrip(t *testing.T) {
	topics := []offsetfetch.RequestTopic{{Name: "t", PartitionIndexes: []int32{0, 1}}}
	prototest.TestRequest(t, 0, &offsetfetch.Request{GroupID: "g", Topics: topics})
	prototest.TestRequest(t, 2, &offsetfetch.Request{GroupID: "g"}) // null topics: all partitions
	prototest.TestRequest(t, 7, &offsetfetch.Request{GroupID: "g", Topics: topics, RequireStable: true})
	prototest.TestRequest(t, 8, &offsetfetch.Request{Groups: []offsetfetch.RequestGroup{{GroupID: "g1", Topics: topics}, {GroupID: "g2"}}})
	prototest.TestRequest(t, 9, &offsetfetch.Request{Groups: []offsetfetch.RequestGroup{{GroupID: "g1", MemberID: "m", MemberEpoch: 4, Topics: topics}}, RequireStable: true})

	partitions := []offsetfetch.ResponsePartition{{PartitionIndex: 0, CommittedOffset: 10, Metadata: "m"}, {PartitionIndex: 1, CommittedOffset: -1, ErrorCode: 3}}
	prototest.TestResponse(t, 0, &offsetfetch.Response{Topics: []offsetfetch.ResponseTopic{{Name: "t", Partitions: partitions}}})
	prototest.TestResponse(t, 3, &offsetfetch.Response{ThrottleTimeMs: 1, ErrorCode: 16, Topics: []offsetfetch.ResponseTopic{{Name: "t", Partitions: partitions}}})
	partitions[0].ComittedLeaderEpoch = 5
	prototest.TestResponse(t, 7, &offsetfetch.Response{ThrottleTimeMs: 1, Topics: []offsetfetch.ResponseTopic{{Name: "t", Partitions: partitions}}})
	prototest.TestResponse(t, 9, &offsetfetch.Response{ThrottleTimeMs: 1, Groups: []offsetfetch.ResponseGroup{
		{GroupID: "g1", Topics: []offsetfetch.ResponseTopic{{Name: "t", Partitions: partitions}}},
		{GroupID: "g2", ErrorCode: 69},
	}})
}

func TestOffsetFetchPrepare(t *testing.T) {
	topics := []offsetfetch.RequestTopic{{Name: "t", PartitionIndexes: []int32{0}}}
	r := &offsetfetch.Request{GroupID: "g", Topics: topics}
	r.Prepare(8)
	want := []offsetfetch.RequestGroup{{GroupID: "g", MemberEpoch: -1, Topics: topics}}
	if !reflect.DeepEqual(r.Groups, want) {
		t.Errorf("v8: Groups = %+v", r.Groups)
	}
	r = &offsetfetch.Request{Groups: want}
	r.Prepare(7)
	if r.GroupID != "g" || !reflect.DeepEqual(r.Topics, topics) {
		t.Errorf("v7: GroupID %q, Topics %+v", r.GroupID, r.Topics)
	}
	if g := (&offsetfetch.Request{Groups: want}).Group(); g != "g" {
		t.Errorf("Group() of a batched request = %q", g)
	}
}

func TestOffsetFetchResponseGroup(t *testing.T) {
	topics := []offsetfetch.ResponseTopic{{Name: "t"}}
	old := &offsetfetch.Response{Topics: topics, ErrorCode: 16}
	if got, code, ok := old.Group("g"); !ok || code != 16 || !reflect.DeepEqual(got, topics) {
		t.Errorf("v7 form: %+v %d %v", got, code, ok)
	}
	batched := &offsetfetch.Response{Groups: []offsetfetch.ResponseGroup{{GroupID: "a"}, {GroupID: "g", Topics: topics, ErrorCode: 1}}}
	if got, code, ok := batched.Group("g"); !ok || code != 1 || !reflect.DeepEqual(got, topics) {
		t.Errorf("v8 form: %+v %d %v", got, code, ok)
	}
	if _, _, ok := batched.Group("zzz"); ok {
		t.Error("found a group missing from the response")
	}
}
