package kafka

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"reflect"
	"testing"
	"time"

	"github.com/segmentio/kafka-go/sasl/scram"
)

// adminSaltedPassword is SCRAM's Hi(password, salt, iterations) (RFC 5802),
// that is PBKDF2 with HMAC-h and one block of output.
func adminSaltedPassword(h func() hash.Hash, password string, salt []byte, iterations int) []byte {
	mac := hmac.New(h, []byte(password))
	mac.Write(salt)
	mac.Write(binary.BigEndian.AppendUint32(nil, 1))
	u := mac.Sum(nil)
	out := append([]byte(nil), u...)
	for i := 1; i < iterations; i++ {
		mac.Reset()
		mac.Write(u)
		u = mac.Sum(u[:0])
		for j := range out {
			out[j] ^= u[j]
		}
	}
	return out
}

func TestClientUserScramCredentials(t *testing.T) {
	client := adminClient(t)
	ctx := adminContext(t)
	user := fmt.Sprintf("scram-user-%d", time.Now().UnixNano())
	salt := []byte("0123456789abcdef")

	// One user may appear only once per request.
	alter, err := client.AlterUserScramCredentials(ctx, &AlterUserScramCredentialsRequest{Upsertions: []UserScramCredentialsUpsertion{
		{Name: user, Mechanism: ScramMechanismSha256, Iterations: 4096, Salt: salt, SaltedPassword: adminSaltedPassword(sha256.New, "pw", salt, 4096)},
		{Name: user, Mechanism: ScramMechanismSha512, Iterations: 8192, Salt: salt, SaltedPassword: adminSaltedPassword(sha512.New, "pw", salt, 8192)},
	}})
	if err != nil || len(alter.Results) != 1 || alter.Results[0].User != user || !errors.Is(alter.Results[0].Error, DuplicateResource) {
		t.Fatalf("two credentials of a user in one request: %+v, %v; want DuplicateResource", alter, err)
	}
	for _, u := range []UserScramCredentialsUpsertion{
		{Name: user, Mechanism: ScramMechanismSha256, Iterations: 4096, Salt: salt, SaltedPassword: adminSaltedPassword(sha256.New, "pw", salt, 4096)},
		{Name: user, Mechanism: ScramMechanismSha512, Iterations: 8192, Salt: salt, SaltedPassword: adminSaltedPassword(sha512.New, "pw", salt, 8192)},
	} {
		alter, err = client.AlterUserScramCredentials(ctx, &AlterUserScramCredentialsRequest{Upsertions: []UserScramCredentialsUpsertion{u}})
		if err != nil {
			t.Fatal(err)
		}
		if len(alter.Results) != 1 || alter.Results[0].User != user || alter.Results[0].Error != nil {
			t.Fatalf("AlterUserScramCredentials results %+v", alter.Results)
		}
	}
	t.Cleanup(func() {
		for _, m := range []ScramMechanism{ScramMechanismSha256, ScramMechanismSha512} {
			client.AlterUserScramCredentials(context.Background(), &AlterUserScramCredentialsRequest{Deletions: []UserScramCredentialsDeletion{{Name: user, Mechanism: m}}})
		}
	})

	desc, err := client.DescribeUserScramCredentials(ctx, &DescribeUserScramCredentialsRequest{Users: []UserScramCredentialsUser{{Name: user}, {Name: user + "-none"}}})
	if err != nil || desc.Error != nil {
		t.Fatalf("DescribeUserScramCredentials: %+v, %v", desc, err)
	}
	if len(desc.Results) != 2 {
		t.Fatalf("described %d users, want 2: %+v", len(desc.Results), desc.Results)
	}
	for _, r := range desc.Results {
		switch r.User {
		case user:
			if r.Error != nil {
				t.Fatalf("describing %s: %v", user, r.Error)
			}
			infos := map[ScramMechanism]int{}
			for _, ci := range r.CredentialInfos {
				infos[ci.Mechanism] = ci.Iterations
			}
			if want := map[ScramMechanism]int{ScramMechanismSha256: 4096, ScramMechanismSha512: 8192}; !reflect.DeepEqual(infos, want) {
				t.Fatalf("credentials of %s: %v, want %v", user, infos, want)
			}
		case user + "-none":
			if !errors.Is(r.Error, ResourceNotFound) || len(r.CredentialInfos) != 0 {
				t.Fatalf("describing a user without credentials: %+v, want ResourceNotFound", r)
			}
		default:
			t.Fatalf("described an unknown user %q", r.User)
		}
	}

	// Deleting a credential leaves the other; deleting it twice fails.
	alter, err = client.AlterUserScramCredentials(ctx, &AlterUserScramCredentialsRequest{Deletions: []UserScramCredentialsDeletion{{Name: user, Mechanism: ScramMechanismSha512}}})
	if err != nil || len(alter.Results) != 1 || alter.Results[0].Error != nil {
		t.Fatalf("deleting the SHA-512 credential: %+v, %v", alter, err)
	}
	alter, err = client.AlterUserScramCredentials(ctx, &AlterUserScramCredentialsRequest{Deletions: []UserScramCredentialsDeletion{{Name: user, Mechanism: ScramMechanismSha512}}})
	if err != nil || len(alter.Results) != 1 || !errors.Is(alter.Results[0].Error, ResourceNotFound) {
		t.Fatalf("deleting the SHA-512 credential again: %+v, %v; want ResourceNotFound", alter, err)
	}
	desc, err = client.DescribeUserScramCredentials(ctx, &DescribeUserScramCredentialsRequest{Users: []UserScramCredentialsUser{{Name: user}}})
	if err != nil || len(desc.Results) != 1 {
		t.Fatalf("DescribeUserScramCredentials: %+v, %v", desc, err)
	}
	if got := desc.Results[0].CredentialInfos; !reflect.DeepEqual(got, []DescribeUserScramCredentialsCredentialInfo{{Mechanism: ScramMechanismSha256, Iterations: 4096}}) {
		t.Fatalf("credentials left: %+v", got)
	}

	// Too few iterations are refused.
	alter, err = client.AlterUserScramCredentials(ctx, &AlterUserScramCredentialsRequest{Upsertions: []UserScramCredentialsUpsertion{
		{Name: user + "-weak", Mechanism: ScramMechanismSha256, Iterations: 1, Salt: salt, SaltedPassword: []byte("x")},
	}})
	if err != nil || len(alter.Results) != 1 || !errors.Is(alter.Results[0].Error, UnacceptableCredential) {
		t.Fatalf("a credential with 1 iteration: %+v, %v; want UnacceptableCredential", alter, err)
	}
}

// A credential created with AlterUserScramCredentials logs in.
func TestClientUserScramCredentialsLogin(t *testing.T) {
	addrs := adminBrokers(t, "KAFKA_SASL_BROKERS", "127.0.0.1:9096")
	admin, err := scram.Mechanism(scram.SHA512, "scram512-user", "scram512-secret")
	if err != nil {
		t.Fatal(err)
	}
	adminTransport := &Transport{SASL: admin}
	defer adminTransport.CloseIdleConnections()
	client := &Client{Addr: TCP(addrs...), Transport: adminTransport, Timeout: 20 * time.Second}
	ctx := adminContext(t)

	user := fmt.Sprintf("new-user-%d", time.Now().UnixNano())
	salt := []byte(user + "-salt")
	alter, err := client.AlterUserScramCredentials(ctx, &AlterUserScramCredentialsRequest{Upsertions: []UserScramCredentialsUpsertion{
		{Name: user, Mechanism: ScramMechanismSha256, Iterations: 4096, Salt: salt, SaltedPassword: adminSaltedPassword(sha256.New, "s3cret", salt, 4096)},
	}})
	if err != nil || len(alter.Results) != 1 || alter.Results[0].Error != nil {
		t.Fatalf("AlterUserScramCredentials: %+v, %v", alter, err)
	}
	t.Cleanup(func() {
		client.AlterUserScramCredentials(context.Background(), &AlterUserScramCredentialsRequest{Deletions: []UserScramCredentialsDeletion{{Name: user, Mechanism: ScramMechanismSha256}}})
	})

	login := func(password string) error {
		mech, err := scram.Mechanism(scram.SHA256, user, password)
		if err != nil {
			t.Fatal(err)
		}
		tr := &Transport{SASL: mech}
		defer tr.CloseIdleConnections()
		_, err = (&Client{Addr: TCP(addrs...), Transport: tr}).Metadata(ctx, &MetadataRequest{})
		return err
	}
	if err := login("s3cret"); err != nil {
		t.Fatalf("logging in with the new credential: %v", err)
	}
	if err := login("wrong"); !errors.Is(err, SASLAuthenticationFailed) {
		t.Fatalf("logging in with a wrong password: %v, want SASLAuthenticationFailed", err)
	}
}
