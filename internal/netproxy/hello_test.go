package netproxy

import (
	"crypto/ecdh"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// realHello returns the first TLS record crypto/tls's client writes with
// cfg: its ClientHello, real bytes to hold the parser to.
func realHello(t testing.TB, cfg *tls.Config) []byte {
	t.Helper()
	cli, srv := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = tls.Client(cli, cfg).Handshake() // fails when srv closes
		cli.Close()
	}()
	defer func() { srv.Close(); <-done }()
	_ = srv.SetReadDeadline(time.Now().Add(60 * time.Second))
	hdr := make([]byte, recordHeaderLen)
	if _, err := io.ReadFull(srv, hdr); err != nil {
		t.Fatal(err)
	}
	n, err := helloRecordLen(hdr)
	if err != nil {
		t.Fatalf("crypto/tls's first record: %v", err)
	}
	rec := make([]byte, n)
	copy(rec, hdr)
	if _, err := io.ReadFull(srv, rec[recordHeaderLen:]); err != nil {
		t.Fatal(err)
	}
	return rec
}

// goServerName is what crypto/tls's server reads as rec's server name:
// reached is false when it did not get as far as the ClientHelloInfo (it
// refused the bytes first).
func goServerName(rec []byte) (name string, reached bool) {
	cli, srv := net.Pipe()
	_ = srv.SetDeadline(time.Now().Add(60 * time.Second))
	stop := errors.New("stop")
	cfg := &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		name, reached = h.ServerName, true
		return nil, stop
	}}
	wrote := make(chan struct{})
	go func() { defer close(wrote); _, _ = cli.Write(rec); _ = cli.Close() }()
	drained := make(chan struct{})
	go func() { defer close(drained); _, _ = io.Copy(io.Discard, cli) }() // the server's alert
	_ = tls.Server(srv, cfg).Handshake()
	srv.Close()
	<-wrote
	<-drained
	return name, reached
}

var helloConfigs = []struct {
	name string
	cfg  *tls.Config
	want string // the server name the parser must find
}{
	{"name", &tls.Config{ServerName: "example.com"}, "example.com"},
	{"mixed case", &tls.Config{ServerName: "Registry.NPMjs.org"}, "Registry.NPMjs.org"},
	{"trailing dot", &tls.Config{ServerName: "example.com."}, "example.com"}, // crypto/tls drops it
	{"tls12 only", &tls.Config{ServerName: "proxy.golang.org", MaxVersion: tls.VersionTLS12}, "proxy.golang.org"},
	{"tls13 only", &tls.Config{ServerName: "proxy.golang.org", MinVersion: tls.VersionTLS13}, "proxy.golang.org"},
	{"alpn", &tls.Config{ServerName: "h2.example", NextProtos: []string{"h2", "http/1.1"}}, "h2.example"},
	{"long name", &tls.Config{ServerName: strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + ".example"}, strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + ".example"},
	{"ipv4 literal", &tls.Config{ServerName: "127.0.0.1"}, ""}, // no SNI for an address
	{"ipv6 literal", &tls.Config{ServerName: "::1"}, ""},
	{"no name", &tls.Config{InsecureSkipVerify: true}, ""},
	{"session ticket", &tls.Config{ServerName: "example.com", ClientSessionCache: tls.NewLRUClientSessionCache(1)}, "example.com"},
}

// echConfigList is an ECHConfigList (RFC 9849 §4) for one fresh X25519 key
// whose public name is public: what a client needs to encrypt its
// ClientHello's real server name.
func echConfigList(t testing.TB, public string) []byte {
	t.Helper()
	key, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	u16 := func(b []byte, v int) []byte { return append(b, byte(v>>8), byte(v)) }
	pub := key.PublicKey().Bytes()
	var c []byte
	c = append(c, 1)      // config_id
	c = u16(c, 0x0020)    // DHKEM(X25519, HKDF-SHA256)
	c = u16(c, len(pub))  // public_key
	c = append(c, pub...) //
	c = u16(c, 4)         // cipher_suites: HKDF-SHA256, AES-128-GCM
	c = u16(u16(c, 1), 1) //
	c = append(c, 0)      // maximum_name_length
	c = append(c, byte(len(public)))
	c = append(c, public...) // public_name
	c = u16(c, 0)            // extensions
	cfg := u16(u16(nil, 0xfe0d), len(c))
	cfg = append(cfg, c...)
	return append(u16(nil, len(cfg)), cfg...)
}

// TestClientHelloECH: crypto/tls's ClientHello with an encrypted client
// hello names, in the clear, the provider's public name — which could be
// the CONNECT host while the hidden name is any site: it is refused.
func TestClientHelloECH(t *testing.T) {
	rec := realHello(t, &tls.Config{
		ServerName:                     "hidden.example",
		MinVersion:                     tls.VersionTLS13,
		EncryptedClientHelloConfigList: echConfigList(t, "public.example"),
	})
	if goName, ok := goServerName(rec); !ok || goName != "public.example" {
		t.Fatalf("crypto/tls's server reads %q (reached %v): not the ECH hello this test means", goName, ok)
	}
	if name, err := clientHelloSNI(rec); !errors.Is(err, errECH) {
		t.Errorf("an ECH hello: %q, %v", name, err)
	}
}

// TestClientHelloSNIReal: the server name of ClientHellos crypto/tls
// writes, as its server reads them; every shorter prefix, every longer
// record and every corrupted length is refused, never read as "no name".
func TestClientHelloSNIReal(t *testing.T) {
	for _, c := range helloConfigs {
		t.Run(c.name, func(t *testing.T) {
			rec := realHello(t, c.cfg)
			got, err := clientHelloSNI(rec)
			if err != nil || got != c.want {
				t.Fatalf("clientHelloSNI = %q, %v; want %q", got, err, c.want)
			}
			if goName, ok := goServerName(rec); !ok || goName != got {
				t.Errorf("crypto/tls's server reads %q (reached %v), the parser %q", goName, ok, got)
			}
			for i := range len(rec) {
				if name, err := clientHelloSNI(rec[:i]); err == nil {
					t.Fatalf("a %d-byte prefix of %d parsed (%q)", i, len(rec), name)
				}
			}
			if _, err := clientHelloSNI(append(rec[:len(rec):len(rec)], 0)); err == nil {
				t.Error("a record with a byte beyond its length parsed")
			}
			// The handshake message longer than its record: split.
			split := append([]byte(nil), rec...)
			split[recordHeaderLen+3]++
			if _, err := clientHelloSNI(split); !errors.Is(err, errSplitHello) {
				t.Errorf("a hello longer than its record: %v", err)
			}
		})
	}
}

// hello builds a TLS 1.2-style ClientHello record with these extensions
// (type, body) — for what crypto/tls would never write.
func hello(exts ...[2][]byte) []byte {
	var e []byte
	for _, x := range exts {
		e = append(e, x[0]...)
		e = append(e, byte(len(x[1])>>8), byte(len(x[1])))
		e = append(e, x[1]...)
	}
	body := []byte{3, 3}
	body = append(body, make([]byte, 32)...) // random
	body = append(body, 0)                   // session id
	body = append(body, 0, 2, 0x13, 0x01)    // one suite
	body = append(body, 1, 0)                // null compression
	body = append(body, byte(len(e)>>8), byte(len(e)))
	body = append(body, e...)
	msg := append([]byte{1, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}, body...)
	return append([]byte{0x16, 3, 1, byte(len(msg) >> 8), byte(len(msg))}, msg...)
}

// sniExt is a server_name extension listing these (type, name) entries.
func sniExt(names ...[2]string) [2][]byte {
	var list []byte
	for _, n := range names {
		list = append(list, n[0][0], byte(len(n[1])>>8), byte(len(n[1])))
		list = append(list, n[1]...)
	}
	return [2][]byte{{0, 0}, append([]byte{byte(len(list) >> 8), byte(len(list))}, list...)}
}

func host(n string) [2]string { return [2]string{"\x00", n} }

func TestClientHelloSNICrafted(t *testing.T) {
	other := [2][]byte{{0x00, 0x10}, {0, 3, 2, 'h', '2'}} // ALPN
	for _, c := range []struct {
		name string
		rec  []byte
		want string
		err  error
	}{
		{"one name", hello(other, sniExt(host("a.example"))), "a.example", nil},
		{"empty extensions", hello(), "", nil},
		{"no server name", hello(other), "", nil},
		{"two extensions", hello(sniExt(host("a.example")), other, sniExt(host("b.example"))), "", errTwoNames},
		{"two host names", hello(sniExt(host("a.example"), host("b.example"))), "", errTwoNames},
		{"unknown type ignored", hello(sniExt([2]string{"\x07", "x"}, host("a.example"))), "a.example", nil},
		{"empty list", hello(sniExt()), "", errBadName},
		{"empty name", hello(sniExt(host(""))), "", errBadName},
		{"NUL in name", hello(sniExt(host("a.example\x00.evil"))), "", errBadName},
		{"space in name", hello(sniExt(host("a .example"))), "", errBadName},
		{"percent in name", hello(sniExt(host("a%2eexample"))), "", errBadName},
		{"name too long", hello(sniExt(host(strings.Repeat("a", 256)))), "", errBadName},
		{"not TLS", []byte("GET / HTTP/1.1\r\nHost: a.example\r\n\r\n"), "", errNotTLS},
		{"SSLv2 hello", []byte{0x80, 0x2e, 0x01, 0x03, 0x01}, "", errNotTLS},
		{"alert record", []byte{0x15, 3, 1, 0, 2, 2, 0x31}, "", errNotTLS},
		{"empty record", []byte{0x16, 3, 1, 0, 0}, "", errNotHello},
		{"record too long", []byte{0x16, 3, 1, 0x40, 0x01}, "", errRecordLength},
		{"server hello", append([]byte{0x16, 3, 3, 0, 4}, 2, 0, 0, 0), "", errNotHello},
		{"ECH", hello(sniExt(host("a.example")), [2][]byte{{0xfe, 0x0d}, {0}}), "", errECH},
		{"ESNI draft", hello(sniExt(host("a.example")), [2][]byte{{0xff, 0xce}, {0}}), "", errECH},
	} {
		got, err := clientHelloSNI(c.rec)
		if got != c.want || !errors.Is(err, c.err) {
			t.Errorf("%s: %q, %v; want %q, %v", c.name, got, err, c.want, c.err)
		}
		if c.err == nil && c.rec[0] == 0x16 {
			if goName, ok := goServerName(c.rec); ok && goName != got {
				t.Errorf("%s: crypto/tls reads %q, the parser %q", c.name, goName, got)
			}
		}
	}
}

// FuzzClientHelloSNI: the parser never panics, returns a name only when it
// is a clean DNS name, and never disagrees with crypto/tls's server about a
// name that server would act on — in particular never reports "no name"
// (or another name) for a hello in which the server reads one.
func FuzzClientHelloSNI(f *testing.F) {
	for _, c := range helloConfigs {
		f.Add(realHello(f, c.cfg))
	}
	f.Add(realHello(f, &tls.Config{ServerName: "hidden.example", MinVersion: tls.VersionTLS13, EncryptedClientHelloConfigList: echConfigList(f, "public.example")}))
	f.Add(hello(sniExt(host("a.example"), host("b.example"))))
	f.Add(hello(sniExt([2]string{"\x07", "x"}, host("a.example"))))
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Fuzz(func(t *testing.T, rec []byte) {
		if len(rec) > maxHelloRecord {
			rec = rec[:maxHelloRecord]
		}
		name, err := clientHelloSNI(rec)
		if err != nil {
			if name != "" {
				t.Fatalf("a name %q with an error %v", name, err)
			}
			return
		}
		if name != "" && !validServerName([]byte(name)) {
			t.Fatalf("an invalid name %q", name)
		}
		if n, err := helloRecordLen(rec); err != nil || n != len(rec) {
			t.Fatalf("parsed a record whose header says %d of %d bytes (%v)", n, len(rec), err)
		}
		if goName, ok := goServerName(rec); ok && goName != name {
			t.Fatalf("crypto/tls's server reads %q, the parser %q", goName, name)
		}
	})
}
