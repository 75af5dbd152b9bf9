package scram

import (
	"context"
	"crypto/sha1"
	"errors"
	"hash"
	"strings"
	"sync"
	"testing"

	"github.com/segmentio/kafka-go/sasl"
	"github.com/xdg-go/scram"
)

// sha1Algo exercises the Algorithm interface with the hash of RFC 5802's
// example; Kafka itself only offers SHA-256 and SHA-512.
type sha1Algo struct{}

func (sha1Algo) Name() string    { return "SCRAM-SHA-1" }
func (sha1Algo) Hash() hash.Hash { return sha1.New() }

func TestAlgorithms(t *testing.T) {
	if SHA256.Name() != "SCRAM-SHA-256" || SHA256.Hash().Size() != 32 {
		t.Errorf("SHA256: %s %d", SHA256.Name(), SHA256.Hash().Size())
	}
	if SHA512.Name() != "SCRAM-SHA-512" || SHA512.Hash().Size() != 64 {
		t.Errorf("SHA512: %s %d", SHA512.Name(), SHA512.Hash().Size())
	}
	if SHA256 == SHA512 || SHA256 != Algorithm(algoSHA256) {
		t.Error("algorithms must be distinct comparable values")
	}
	m, err := Mechanism(SHA512, "u", "p")
	if err != nil || m.Name() != "SCRAM-SHA-512" {
		t.Fatalf("%v %v", m, err)
	}
}

// runVector replays a published exchange with the client nonce fixed.
func runVector(t *testing.T, algo Algorithm, nonce string, msgs [4]string) {
	t.Helper()
	m, err := newMechanism(algo, "user", "pencil", func() string { return nonce })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sm, first, err := m.Start(ctx)
	if err != nil || string(first) != msgs[0] {
		t.Fatalf("client-first %q, %v; want %q", first, err, msgs[0])
	}
	done, final, err := sm.Next(ctx, []byte(msgs[1]))
	if err != nil || done || string(final) != msgs[2] {
		t.Fatalf("client-final %q done=%v, %v; want %q", final, done, err, msgs[2])
	}
	done, resp, err := sm.Next(ctx, []byte(msgs[3]))
	if err != nil || !done || len(resp) != 0 {
		t.Fatalf("after server-final: done=%v resp=%q err=%v", done, resp, err)
	}
}

func TestRFC5802Vector(t *testing.T) {
	runVector(t, sha1Algo{}, "fyko+d2lbbFgONRv9qkxdawL", [4]string{
		"n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL",
		"r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096",
		"c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=",
		"v=rmF9pqV8S7suAoZWja4dJRkFsKQ=",
	})
}

func TestRFC7677Vector(t *testing.T) {
	runVector(t, SHA256, "rOprNGfwEbeRWgbNEkqO", [4]string{
		"n,,n=user,r=rOprNGfwEbeRWgbNEkqO",
		"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
		"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=",
		"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=",
	})
}

// A forged server signature must fail the exchange even though everything
// else was accepted.
func TestRejectsBadServerSignature(t *testing.T) {
	m, _ := newMechanism(SHA256, "user", "pencil", func() string { return "rOprNGfwEbeRWgbNEkqO" })
	ctx := context.Background()
	sm, _, _ := m.Start(ctx)
	sm.Next(ctx, []byte("r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096"))
	if _, _, err := sm.Next(ctx, []byte("v=AAAATRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")); err == nil {
		t.Fatal("forged server signature accepted")
	}
}

// server is an in-process SCRAM server from the same library, standing in
// for the broker.
func server(t *testing.T, hashGen scram.HashGeneratorFcn, user, pass string) *scram.Server {
	t.Helper()
	creds := map[string]scram.StoredCredentials{}
	c, err := hashGen.NewClient(user, pass, "")
	if err != nil {
		t.Fatal(err)
	}
	creds[user], err = c.GetStoredCredentialsWithError(scram.KeyFactors{Salt: "kafka-salt-0123", Iters: 4096})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := hashGen.NewServer(func(name string) (scram.StoredCredentials, error) {
		if sc, ok := creds[name]; ok {
			return sc, nil
		}
		return scram.StoredCredentials{}, errors.New("unknown user")
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv
}

// converse drives a full exchange the way the client's SASL authenticate
// loop does, returning the server's verdict and the client's error.
func converse(ctx context.Context, m sasl.Mechanism, srv *scram.Server) (serverOK bool, clientErr error) {
	sm, msg, err := m.Start(ctx)
	if err != nil {
		return false, err
	}
	conv := srv.NewConversation()
	for {
		challenge, serr := conv.Step(string(msg))
		if serr != nil {
			return false, nil // the broker would close the exchange with an error
		}
		done, resp, err := sm.Next(ctx, []byte(challenge))
		if err != nil {
			return conv.Valid(), err
		}
		if done {
			return conv.Valid(), nil
		}
		msg = resp
	}
}

func TestConversationWithServer(t *testing.T) {
	for _, tt := range []struct {
		algo    Algorithm
		hashGen scram.HashGeneratorFcn
	}{{SHA256, scram.SHA256}, {SHA512, scram.SHA512}} {
		t.Run(tt.algo.Name(), func(t *testing.T) {
			srv := server(t, tt.hashGen, "scram-user", "scram-secret")
			ctx := context.Background()

			good, err := Mechanism(tt.algo, "scram-user", "scram-secret")
			if err != nil {
				t.Fatal(err)
			}
			// Several exchanges, concurrently, through one Mechanism.
			var wg sync.WaitGroup
			for i := 0; i < 4; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if ok, err := converse(ctx, good, srv); !ok || err != nil {
						t.Errorf("valid credentials: server ok=%v client err=%v", ok, err)
					}
				}()
			}
			wg.Wait()

			for name, creds := range map[string][2]string{
				"wrong password": {"scram-user", "not-the-secret"},
				"unknown user":   {"nobody", "scram-secret"},
			} {
				m, _ := Mechanism(tt.algo, creds[0], creds[1])
				if ok, _ := converse(ctx, m, srv); ok {
					t.Errorf("%s: server accepted", name)
				}
			}

			// The hash matters: a client on the other algorithm fails.
			other := SHA512
			if tt.algo == SHA512 {
				other = SHA256
			}
			m, _ := Mechanism(other, "scram-user", "scram-secret")
			if ok, _ := converse(ctx, m, srv); ok {
				t.Error("server accepted a client using the other hash")
			}
		})
	}
}

func TestClientFirstMessage(t *testing.T) {
	m, err := Mechanism(SHA256, "user=with,comma", "pw")
	if err != nil {
		t.Fatal(err)
	}
	_, first, err := m.Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// RFC 5802 escapes '=' and ',' in user names.
	if !strings.HasPrefix(string(first), "n,,n=user=3Dwith=2Ccomma,r=") {
		t.Fatalf("client-first %q", first)
	}
	_, again, _ := m.Start(context.Background())
	if string(again) == string(first) {
		t.Fatal("two exchanges used the same nonce")
	}
}

func TestInvalidCredentials(t *testing.T) {
	// SASLprep prohibits control characters.
	if _, err := Mechanism(SHA256, "user", "bad\u0007password"); err == nil {
		t.Fatal("prohibited character accepted")
	}
}
