package kafka

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// errorConstants parses error.go and returns every constant of type Error
// declared there with a literal value, with the Kafka name in its comment.
func errorConstants(t *testing.T) (names map[string]Error, kafkaNames map[Error]string) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "error.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	names = map[string]Error{}
	kafkaNames = map[Error]string{}
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Error" || len(vs.Values) != 1 {
				continue
			}
			var code int64
			switch v := vs.Values[0].(type) {
			case *ast.BasicLit:
				code, _ = strconv.ParseInt(v.Value, 10, 64)
			case *ast.UnaryExpr:
				code, _ = strconv.ParseInt(v.X.(*ast.BasicLit).Value, 10, 64)
				code = -code
			default:
				t.Fatalf("unexpected value for %s", vs.Names[0].Name)
			}
			names[vs.Names[0].Name] = Error(code)
			if vs.Comment != nil {
				kafkaNames[Error(code)] = strings.Fields(vs.Comment.Text())[0]
			}
		}
	}
	return names, kafkaNames
}

func TestErrorEveryConstantDocumented(t *testing.T) {
	names, kafkaNames := errorConstants(t)
	if len(names) < 134 {
		t.Fatalf("only %d error constants found", len(names))
	}
	seen := map[Error]string{}
	for name, code := range names {
		if prev, dup := seen[code]; dup {
			t.Errorf("%s and %s share code %d", name, prev, code)
		}
		seen[code] = name
		if code.Title() == "" || code.Description() == "" {
			t.Errorf("%s (%d) has an empty title or description", name, code)
		}
		if !strings.HasPrefix(code.Error(), fmt.Sprintf("[%d] %s: ", code, code.Title())) {
			t.Errorf("%s: unexpected Error() %q", name, code.Error())
		}
		if kafkaNames[code] == "" {
			t.Errorf("%s has no Kafka name comment", name)
		}
	}
	// No gaps: every code Kafka defined up to 4.1 has a constant.
	for c := Error(1); c <= ShareSessionLimitReached; c++ {
		if _, ok := seen[c]; !ok {
			t.Errorf("no constant for code %d", c)
		}
	}
	if _, ok := seen[Unknown]; !ok {
		t.Error("no constant for code -1")
	}
}

// Spot checks of codes against the error table of the Kafka protocol
// documentation (https://kafka.apache.org/protocol#protocol_error_codes).
func TestErrorCodesMatchKafkaProtocol(t *testing.T) {
	_, kafkaNames := errorConstants(t)
	spec := []struct {
		kafkaName string
		code      int
		err       Error
	}{
		{"UNKNOWN_SERVER_ERROR", -1, Unknown},
		{"OFFSET_OUT_OF_RANGE", 1, OffsetOutOfRange},
		{"CORRUPT_MESSAGE", 2, InvalidMessage},
		{"UNKNOWN_TOPIC_OR_PARTITION", 3, UnknownTopicOrPartition},
		{"NOT_LEADER_OR_FOLLOWER", 6, NotLeaderForPartition},
		{"REQUEST_TIMED_OUT", 7, RequestTimedOut},
		{"MESSAGE_TOO_LARGE", 10, MessageSizeTooLarge},
		{"NETWORK_EXCEPTION", 13, NetworkException},
		{"COORDINATOR_LOAD_IN_PROGRESS", 14, GroupLoadInProgress},
		{"NOT_COORDINATOR", 16, NotCoordinatorForGroup},
		{"ILLEGAL_GENERATION", 22, IllegalGeneration},
		{"REBALANCE_IN_PROGRESS", 27, RebalanceInProgress},
		{"TOPIC_AUTHORIZATION_FAILED", 29, TopicAuthorizationFailed},
		{"UNSUPPORTED_VERSION", 35, UnsupportedVersion},
		{"TOPIC_ALREADY_EXISTS", 36, TopicAlreadyExists},
		{"NOT_CONTROLLER", 41, NotController},
		{"INVALID_PRODUCER_EPOCH", 47, InvalidProducerEpoch},
		{"OPERATION_NOT_ATTEMPTED", 55, OperationNotAttempted},
		{"KAFKA_STORAGE_ERROR", 56, KafkaStorageError},
		{"SASL_AUTHENTICATION_FAILED", 58, SASLAuthenticationFailed},
		{"GROUP_ID_NOT_FOUND", 69, GroupIdNotFound},
		{"FENCED_LEADER_EPOCH", 74, FencedLeaderEpoch},
		{"MEMBER_ID_REQUIRED", 79, MemberIDRequired},
		{"FENCED_INSTANCE_ID", 82, FencedInstanceID},
		{"THROTTLING_QUOTA_EXCEEDED", 89, ThrottlingQuotaExceeded},
		{"PRODUCER_FENCED", 90, ProducerFenced},
		{"UNKNOWN_TOPIC_ID", 100, UnknownTopicID},
		{"FETCH_SESSION_TOPIC_ID_ERROR", 106, FetchSessionTopicIDError},
		{"FENCED_MEMBER_EPOCH", 110, FencedMemberEpoch},
		{"STALE_MEMBER_EPOCH", 113, StaleMemberEpoch},
		{"TRANSACTION_ABORTABLE", 120, TransactionAbortable},
		{"VOTER_NOT_FOUND", 127, VoterNotFound},
		{"REBOOTSTRAP_REQUIRED", 129, RebootstrapRequired},
	}
	for _, s := range spec {
		if int(s.err) != s.code {
			t.Errorf("%s: constant is %d, Kafka says %d", s.kafkaName, s.err, s.code)
		}
		if got := kafkaNames[Error(s.code)]; got != s.kafkaName {
			t.Errorf("code %d is commented %q, Kafka calls it %s", s.code, got, s.kafkaName)
		}
	}
}

func TestErrorTemporaryAndTimeout(t *testing.T) {
	temporary := map[Error]bool{
		InvalidMessage: true, UnknownTopicOrPartition: true, LeaderNotAvailable: true,
		NotLeaderForPartition: true, RequestTimedOut: true, NetworkException: true,
		GroupLoadInProgress: true, GroupCoordinatorNotAvailable: true, NotCoordinatorForGroup: true,
		NotEnoughReplicas: true, NotEnoughReplicasAfterAppend: true, NotController: true,
		KafkaStorageError: true, FetchSessionIDNotFound: true, InvalidFetchSessionEpoch: true,
		ListenerNotFound: true, FencedLeaderEpoch: true, UnknownLeaderEpoch: true,
		OffsetNotAvailable: true, PreferredLeaderNotAvailable: true, EligibleLeadersNotAvailable: true,
		ElectionNotNeeded: true, NoReassignmentInProgress: true, GroupSubscribedToTopic: true,
		UnstableOffsetCommit: true, ThrottlingQuotaExceeded: true, UnknownTopicID: true,
		InconsistentTopicID: true, FetchSessionTopicIDError: true, ShareSessionLimitReached: true,
	}
	names, _ := errorConstants(t)
	for name, code := range names {
		if got := code.Temporary(); got != temporary[code] {
			t.Errorf("%s.Temporary() = %v, want %v", name, got, temporary[code])
		}
		if got := code.Timeout(); got != (code == RequestTimedOut) {
			t.Errorf("%s.Timeout() = %v", name, got)
		}
	}
	if Error(5000).Temporary() || Error(5000).Title() != "" || Error(5000).Error() == "" {
		t.Error("unknown codes must be non-temporary, untitled, but still printable")
	}
}

func TestErrorStrings(t *testing.T) {
	if got := UnknownTopicOrPartition.Error(); !strings.HasPrefix(got, "[3] Unknown Topic Or Partition: ") {
		t.Errorf("unexpected message %q", got)
	}
	if got := InvalidGroupId.Title(); got != "Invalid Group ID" {
		t.Errorf("unexpected title %q", got)
	}
}

func TestMakeError(t *testing.T) {
	if makeError(0, "ignored") != nil {
		t.Fatal("code 0 must be success")
	}
	if err := makeError(3, ""); err != UnknownTopicOrPartition {
		t.Fatalf("got %#v", err)
	}
	err := makeError(29, "not allowed on topic x")
	if !errors.Is(err, TopicAuthorizationFailed) {
		t.Fatal("errors.Is must see the code through the message")
	}
	var code Error
	if !errors.As(err, &code) || code != TopicAuthorizationFailed {
		t.Fatal("errors.As must extract the code")
	}
	if want := TopicAuthorizationFailed.Error() + ": not allowed on topic x"; err.Error() != want {
		t.Fatalf("got %q want %q", err.Error(), want)
	}
	wrapped := fmt.Errorf("writing: %w", err)
	if !errors.Is(wrapped, TopicAuthorizationFailed) || isTemporary(wrapped) {
		t.Fatal("classification through two levels of wrapping")
	}
	if !isTemporary(fmt.Errorf("x: %w", makeError(6, "moved"))) {
		t.Fatal("NotLeaderForPartition must be temporary through wrapping")
	}
	if !isTimeout(fmt.Errorf("x: %w", RequestTimedOut)) || isTimeout(LeaderNotAvailable) || isTimeout(nil) {
		t.Fatal("isTimeout")
	}
}

func TestErrorHelpers(t *testing.T) {
	if silentEOF(fmt.Errorf("a: %w", io.EOF)) != nil || silentEOF(io.ErrUnexpectedEOF) != io.ErrUnexpectedEOF {
		t.Error("silentEOF")
	}
	a, b := errors.New("a"), errors.New("b")
	if coalesceErrors(nil, a, b) != a || coalesceErrors() != nil || coalesceErrors(nil, nil) != nil {
		t.Error("coalesceErrors")
	}
	for _, err := range []error{io.ErrUnexpectedEOF, syscall.ECONNREFUSED, fmt.Errorf("w: %w", syscall.ECONNRESET), syscall.EPIPE} {
		if !isTransientNetworkError(err) {
			t.Errorf("%v must be transient", err)
		}
	}
	if isTransientNetworkError(io.EOF) || isTransientNetworkError(nil) || isTransientNetworkError(UnknownTopicOrPartition) {
		t.Error("isTransientNetworkError false positive")
	}
}

func TestMessageTooLargeError(t *testing.T) {
	msgs := []Message{{Value: []byte("a")}, {Value: []byte("b")}, {Value: []byte("c")}}
	err := messageTooLarge(msgs, 1)
	if string(err.Message.Value) != "b" || len(err.Remaining) != 2 ||
		string(err.Remaining[0].Value) != "a" || string(err.Remaining[1].Value) != "c" {
		t.Fatalf("unexpected split %+v", err)
	}
	if !errors.Is(err, MessageSizeTooLarge) || err.Error() != MessageSizeTooLarge.Error() {
		t.Fatal("MessageTooLargeError must match MessageSizeTooLarge")
	}
	if one := messageTooLarge(msgs[:1], 0); len(one.Remaining) != 0 {
		t.Fatal("no remaining messages expected")
	}
}

func TestWriteErrors(t *testing.T) {
	errs := WriteErrors{nil, LeaderNotAvailable, nil, errors.New("boom")}
	if errs.Count() != 2 {
		t.Fatalf("Count() = %d", errs.Count())
	}
	want := fmt.Sprintf("Kafka write errors (2/4), errors: [%s boom]", LeaderNotAvailable.Error())
	if errs.Error() != want {
		t.Fatalf("got %q\nwant %q", errs.Error(), want)
	}
	if got := (WriteErrors{nil}).Error(); got != "Kafka write errors (0/1), errors: []" {
		t.Fatalf("got %q", got)
	}
}
