package kmsgcheck

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/segmentio/kafka-go/protocol"
	"github.com/segmentio/kafka-go/protocol/rawproduce"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const (
	testClientID      = "kmsgcheck-client"
	testCorrelationID = int32(0x01020304)
)

// knownMismatches lists the cases where the project's codec disagrees with
// kmsg because of a bug on our side that is not fixed yet, with the reason.
// TestOracle requires each listed case to still fail (so that a fix shows
// up as a test failure until its entry is removed) and every other case to
// pass. Case names are "<API>/v<N>/<request|response>[/<variant>]".
// It is empty: every case passes (the last entries, tagged fields with a
// non-zero default and empty record sets, were fixed in the protocol core).
var knownMismatches = map[string]string{}

// kmsgCannotExpress lists the registered APIs that kmsg has no message
// types for, with the reason. It is empty: kmsg covers every API the
// project registers.
var kmsgCannotExpress = map[protocol.ApiKey]string{}

// oracleCase is one API, version, direction and fill mode.
type oracleCase struct {
	key      protocol.ApiKey
	version  int16
	response bool
	raw      bool // encode with the rawproduce override (Produce requests)
	mode     fillMode
}

func (c oracleCase) name() string {
	dir := "request"
	if c.response {
		dir = "response"
	}
	s := fmt.Sprintf("%s/v%d/%s%s", c.key, c.version, dir, c.mode)
	if c.raw {
		s += "/raw"
	}
	return s
}

// legacyRecords tells whether record sets at this API version are magic 1
// message sets (Produce v0-2, Fetch v0-3) rather than v2 batches.
func legacyRecords(key protocol.ApiKey, v int16) bool {
	return (key == protocol.Produce && v < 3) || (key == protocol.Fetch && v < 4)
}

// flexibleVersion tells whether version v of key is flexible, as kmsg
// says (the framing tests check that we agree).
func flexibleVersion(key protocol.ApiKey, v int16) bool {
	req := kmsg.RequestForKey(int16(key))
	if req == nil {
		return false
	}
	req.SetVersion(v)
	return req.IsFlexible()
}

// registeredAPIs returns the API key of each package in apiPackages, in
// key order.
func registeredAPIs(t *testing.T) []apiPackage {
	t.Helper()
	out := append([]apiPackage(nil), apiPackages...)
	sort.Slice(out, func(i, j int) bool { return out[i].req().ApiKey() < out[j].req().ApiKey() })
	return out
}

func allCases(t *testing.T) []oracleCase {
	var cases []oracleCase
	for _, p := range registeredAPIs(t) {
		key := p.req().ApiKey()
		if _, ok := kmsgCannotExpress[key]; ok {
			continue
		}
		for v := key.MinVersion(); v <= key.MaxVersion(); v++ {
			for _, mode := range []fillMode{fillAll, fillDefaults, fillSparse} {
				cases = append(cases,
					oracleCase{key: key, version: v, mode: mode},
					oracleCase{key: key, version: v, response: true, mode: mode})
				if key == protocol.Produce {
					cases = append(cases, oracleCase{key: key, version: v, raw: true, mode: mode})
				}
			}
			for _, response := range []bool{false, true} {
				cases = append(cases,
					oracleCase{key: key, version: v, response: response, mode: fillEmpty},
					oracleCase{key: key, version: v, response: response, mode: fillEmptyLeaves})
				if key == protocol.Produce && !response {
					cases = append(cases,
						oracleCase{key: key, version: v, raw: true, mode: fillEmpty},
						oracleCase{key: key, version: v, raw: true, mode: fillEmptyLeaves})
				}
				if hasZeroTagged(key, response, v) {
					cases = append(cases, oracleCase{key: key, version: v, response: response, mode: fillZeroTags})
				}
				cases = append(cases, oracleCase{key: key, version: v, response: response, mode: fillLarge})
				if flexibleVersion(key, v) {
					cases = append(cases, oracleCase{key: key, version: v, response: response, mode: fillUnknownTags})
				}
			}
		}
	}
	return cases
}

// TestOracle encodes every registered API at every version in our range
// with kmsg, decodes the frame with the project's codec, re-encodes it and
// requires the very same bytes; then kmsg decodes our bytes and must get
// back what it decoded from its own.
func TestOracle(t *testing.T) {
	cases := allCases(t)
	seen := map[string]bool{}
	var passed, known int
	pairs := map[string]bool{}       // every API/version pair
	failedPairs := map[string]bool{} // the pairs with a failing or known mismatching case
	for _, c := range cases {
		name := c.name()
		seen[name] = true
		pair := fmt.Sprintf("%s/v%d", c.key, c.version)
		pairs[pair] = true
		t.Run(name, func(t *testing.T) {
			err := runCase(c)
			reason, listed := knownMismatches[name]
			switch {
			case listed && err == nil:
				t.Errorf("listed in knownMismatches (%s) but passes now: remove the entry", reason)
			case listed:
				known++
				failedPairs[pair] = true
				t.Logf("known mismatch (%s): %v", reason, err)
			case err != nil:
				failedPairs[pair] = true
				t.Error(err)
			default:
				passed++
			}
		})
	}
	for name := range knownMismatches {
		if !seen[name] {
			t.Errorf("knownMismatches entry %q names no case", name)
		}
	}
	t.Logf("%d cases: %d pass, %d known mismatches; %d of %d API/version pairs pass every case",
		len(cases), passed, known, len(pairs)-len(failedPairs), len(pairs))
}

func runCase(c oracleCase) (err error) {
	defer func() {
		// A panic in either codec is a finding, not a crash of the suite.
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	switch {
	case c.raw:
		return checkRawProduce(c)
	case c.response:
		return checkResponse(c)
	default:
		return checkRequest(c)
	}
}

// buildRequest returns a populated kmsg request of c's API and version.
func buildRequest(c oracleCase) (kmsg.Request, error) {
	req := kmsg.RequestForKey(int16(c.key))
	if req == nil {
		return nil, fmt.Errorf("kmsg has no request for key %d", c.key)
	}
	if req.MaxVersion() < c.version {
		return nil, fmt.Errorf("kmsg %T stops at v%d", req, req.MaxVersion())
	}
	f := filler{mode: c.mode, version: c.version, legacy: legacyRecords(c.key, c.version)}
	f.fillMessage(req)
	req.SetVersion(c.version)
	return req, nil
}

func checkRequest(c oracleCase) error {
	req, err := buildRequest(c)
	if err != nil {
		return err
	}
	formatter := kmsg.NewRequestFormatter(kmsg.FormatterClientID(testClientID))
	input := formatter.AppendRequest(nil, req, testCorrelationID)
	if c.mode == fillUnknownTags || c.mode == fillLarge {
		// We read the frame with unknown tags and must write it without.
		addUnknownTags(reflect.ValueOf(req), false)
	}
	body := req.AppendTo(nil)
	frame := formatter.AppendRequest(nil, req, testCorrelationID)
	want, err := kmsgRoundTrip(kmsg.RequestForKey(int16(c.key)), c.version, body)
	if err != nil {
		return err
	}

	v, corr, clientID, msg, err := protocol.ReadRequest(bytes.NewReader(input))
	if err != nil {
		return fmt.Errorf("our ReadRequest of kmsg's frame: %w", err)
	}
	if v != c.version || corr != testCorrelationID || clientID != testClientID {
		return fmt.Errorf("our ReadRequest header: version %d correlation %#x client %q", v, corr, clientID)
	}
	var out bytes.Buffer
	if err := protocol.WriteRequest(&out, c.version, testCorrelationID, testClientID, msg); err != nil {
		return fmt.Errorf("our WriteRequest of the decoded %T: %w", msg, err)
	}
	if err := compareFrames(frame, out.Bytes(), len(frame)-len(body), want, kmsg.RequestForKey(int16(c.key)), c.version); err != nil {
		return err
	}
	return checkMapping(c, want, msg)
}

// checkMapping reports our fields that received the value of a kmsg field
// they cannot correspond to (see fieldMapping).
func checkMapping(c oracleCase, want kmsgMessage, msg protocol.Message) error {
	if c.mode != fillAll && c.mode != fillUnknownTags && c.mode != fillLarge {
		return nil
	}
	if wrong := fieldMapping(want, msg); len(wrong) > 0 {
		if len(wrong) > 8 {
			wrong = append(wrong[:8], fmt.Sprintf("and %d more", len(wrong)-8))
		}
		return fmt.Errorf("bytes match but values land in the wrong fields: %s", strings.Join(wrong, "; "))
	}
	return nil
}

func checkResponse(c oracleCase) error {
	res := kmsg.ResponseForKey(int16(c.key))
	if res == nil {
		return fmt.Errorf("kmsg has no response for key %d", c.key)
	}
	if res.MaxVersion() < c.version {
		return fmt.Errorf("kmsg %T stops at v%d", res, res.MaxVersion())
	}
	f := filler{mode: c.mode, version: c.version, legacy: legacyRecords(c.key, c.version)}
	f.fillMessage(res)
	res.SetVersion(c.version)
	input := responseFrame(c.key, res, testCorrelationID, res.AppendTo(nil))
	if c.mode == fillUnknownTags || c.mode == fillLarge {
		addUnknownTags(reflect.ValueOf(res), false)
	}
	body := res.AppendTo(nil)
	frame := responseFrame(c.key, res, testCorrelationID, body)
	want, err := kmsgRoundTrip(kmsg.ResponseForKey(int16(c.key)), c.version, body)
	if err != nil {
		return err
	}

	corr, msg, err := protocol.ReadResponse(bytes.NewReader(input), c.key, c.version)
	if err != nil {
		return fmt.Errorf("our ReadResponse of kmsg's frame: %w", err)
	}
	if corr != testCorrelationID {
		return fmt.Errorf("our ReadResponse: correlation id %#x", corr)
	}
	var out bytes.Buffer
	if err := protocol.WriteResponse(&out, c.version, testCorrelationID, msg); err != nil {
		return fmt.Errorf("our WriteResponse of the decoded %T: %w", msg, err)
	}
	if err := compareFrames(frame, out.Bytes(), len(frame)-len(body), want, kmsg.ResponseForKey(int16(c.key)), c.version); err != nil {
		return err
	}
	return checkMapping(c, want, msg)
}

// checkRawProduce builds a rawproduce.Request carrying kmsg's encoded
// record batches unchanged, and requires WriteRequest to produce kmsg's
// Produce request frame.
func checkRawProduce(c oracleCase) error {
	r, err := buildRequest(c)
	if err != nil {
		return err
	}
	req := r.(*kmsg.ProduceRequest)
	body := req.AppendTo(nil)
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID(testClientID)).AppendRequest(nil, req, testCorrelationID)
	want, err := kmsgRoundTrip(kmsg.NewPtrProduceRequest(), c.version, body)
	if err != nil {
		return err
	}
	raw := &rawproduce.Request{Acks: req.Acks, Timeout: req.TimeoutMillis}
	if req.TransactionID != nil {
		raw.TransactionalID = *req.TransactionID
	}
	for _, kt := range req.Topics {
		rt := rawproduce.RequestTopic{Topic: kt.Topic}
		for _, kp := range kt.Partitions {
			rp := rawproduce.RequestPartition{Partition: kp.Partition}
			if kp.Records != nil {
				rp.RecordSet = protocol.RawRecordSet{Reader: bytes.NewReader(kp.Records)}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		raw.Topics = append(raw.Topics, rt)
	}
	var out bytes.Buffer
	if err := protocol.WriteRequest(&out, c.version, testCorrelationID, testClientID, raw); err != nil {
		return fmt.Errorf("our WriteRequest of a rawproduce.Request: %w", err)
	}
	return compareFrames(frame, out.Bytes(), len(frame)-len(body), want, kmsg.NewPtrProduceRequest(), c.version)
}

// responseFrame frames a response body as a broker does: size, correlation
// id, and the empty tagged fields of response header v1 in flexible
// versions, except for ApiVersions whose response header is always v0.
func responseFrame(key protocol.ApiKey, res kmsg.Response, corr int32, body []byte) []byte {
	var hdr []byte
	hdr = append(hdr, byte(corr>>24), byte(corr>>16), byte(corr>>8), byte(corr))
	if res.IsFlexible() && key != protocol.ApiVersions {
		hdr = append(hdr, 0)
	}
	n := len(hdr) + len(body)
	frame := []byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}
	frame = append(frame, hdr...)
	return append(frame, body...)
}

// kmsgMessage is what kmsg requests and responses have in common.
type kmsgMessage interface {
	SetVersion(int16)
	AppendTo([]byte) []byte
	ReadFrom([]byte) error
}

// kmsgRoundTrip decodes body with kmsg into fresh and checks that kmsg
// re-encodes it to the same bytes: if it did not, the case would test the
// harness rather than our codec.
func kmsgRoundTrip(fresh kmsgMessage, version int16, body []byte) (kmsgMessage, error) {
	fresh.SetVersion(version)
	if err := fresh.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("harness: kmsg cannot read its own %T: %w", fresh, err)
	}
	if again := fresh.AppendTo(nil); !bytes.Equal(again, body) {
		return nil, fmt.Errorf("harness: kmsg does not round trip its own %T: %s", fresh, bytesDiff(body, again))
	}
	return fresh, nil
}

// compareFrames requires our frame to equal kmsg's. On a mismatch it says
// where the bytes part and, when kmsg can read our body, which fields
// differ from what kmsg put in. When they match it still has kmsg decode
// our body and compare, which is the check that kmsg gets back its values.
func compareFrames(kframe, ours []byte, hdrLen int, want kmsgMessage, fresh kmsgMessage, version int16) error {
	var ourBody []byte
	if len(ours) >= hdrLen {
		ourBody = ours[hdrLen:]
	}
	fresh.SetVersion(version)
	readErr := fresh.ReadFrom(ourBody)
	var diffs []string
	if readErr == nil {
		diffs = valueDiff(want, fresh, 12)
	}
	if bytes.Equal(kframe, ours) {
		if readErr != nil {
			return fmt.Errorf("kmsg cannot read our (identical) body: %w", readErr)
		}
		if len(diffs) > 0 {
			return fmt.Errorf("kmsg decodes our identical bytes differently: %s", strings.Join(diffs, "; "))
		}
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "frames differ: %s", bytesDiff(kframe, ours))
	// The headers, less the frame size, which differs with any body.
	if len(ours) < hdrLen || !bytes.Equal(kframe[4:hdrLen], ours[4:hdrLen]) {
		b.WriteString("\n  (the headers differ)")
	}
	switch {
	case readErr != nil:
		fmt.Fprintf(&b, "\n  kmsg cannot read our body: %v", readErr)
	case len(diffs) > 0:
		fmt.Fprintf(&b, "\n  kmsg reads our body as (kmsg's value vs ours): %s", strings.Join(diffs, "; "))
	default:
		b.WriteString("\n  kmsg reads our body as the same values (extra or missing trailing bytes, or a tagged field kmsg skips)")
	}
	return errors.New(b.String())
}
