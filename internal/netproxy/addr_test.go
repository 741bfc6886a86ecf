package netproxy

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

func TestClassify(t *testing.T) {
	for addr, want := range map[string]AddrClass{
		"93.184.216.34":           Public,
		"8.8.8.8":                 Public,
		"2606:4700::1111":         Public,
		"::ffff:93.184.216.34":    Public,
		"127.0.0.1":               Loopback,
		"127.1.2.3":               Loopback,
		"::1":                     Loopback,
		"::ffff:127.0.0.1":        Loopback,
		"10.0.0.1":                Private,
		"172.16.5.4":              Private,
		"192.168.1.1":             Private,
		"::ffff:10.0.0.1":         Private,
		"::ffff:192.168.0.1":      Private,
		"fc00::1":                 Private,
		"fd12:3456::1":            Private,
		"fec0::1":                 Private,
		"100.64.0.1":              Shared,
		"100.127.255.254":         Shared,
		"::ffff:100.64.0.1":       Shared,
		"100.128.0.1":             Public,
		"169.254.1.1":             LinkLocal,
		"::ffff:169.254.1.1":      LinkLocal,
		"fe80::1":                 LinkLocal,
		"fe80::1%eth0":            LinkLocal,
		"0.0.0.0":                 Unspecified,
		"0.1.2.3":                 Unspecified,
		"::":                      Unspecified,
		"::ffff:0.0.0.0":          Unspecified,
		"224.0.0.1":               Multicast,
		"239.255.255.250":         Multicast,
		"ff02::1":                 Multicast,
		"ff0e::1":                 Multicast,
		"169.254.169.254":         Metadata,
		"::ffff:169.254.169.254":  Metadata,
		"fd00:ec2::254":           Metadata,
		"168.63.129.16":           Metadata,
		"100.100.100.200":         Metadata,
		"192.0.0.192":             Metadata,
		"169.254.170.2":           Metadata,
		"255.255.255.255":         Reserved,
		"240.0.0.1":               Reserved,
		"198.18.0.1":              Reserved,
		"::127.0.0.1":             Reserved, // IPv4-compatible (deprecated)
		"64:ff9b::7f00:1":         Loopback, // NAT64 of 127.0.0.1
		"64:ff9b::a9fe:a9fe":      Metadata, // NAT64 of 169.254.169.254
		"64:ff9b::808:808":        Public,
		"64:ff9b:1::1":            Private,
		"2002:a00:1::1":           Private, // 6to4 of 10.0.0.1
		"2002:808:808::1":         Public,
		"::ffff:7f00:1":           Loopback, // the same mapped form, in hex
		"0:0:0:0:0:ffff:a00:0001": Private,
	} {
		a, err := netip.ParseAddr(addr)
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		if got := Classify(a); got != want {
			t.Errorf("Classify(%s) = %s, want %s", addr, got, want)
		}
	}
}

// TestResolveRule: a name's addresses are kept only when public or listed
// by the user (in any form of the same address); a literal host — one that
// passed the allow check, so the user named it — is itself.
func TestResolveRule(t *testing.T) {
	addrs := func(ss ...string) []netip.Addr {
		var out []netip.Addr
		for _, s := range ss {
			out = append(out, netip.MustParseAddr(s))
		}
		return out
	}
	for _, c := range []struct {
		name    string
		allow   []string
		host    string
		answer  []netip.Addr
		want    []netip.Addr
		refused AddrClass
	}{
		{"public", nil, "pub.test", addrs("93.184.216.34"), addrs("93.184.216.34"), ""},
		{"loopback", nil, "lo.test", addrs("127.0.0.1"), nil, Loopback},
		{"mapped loopback", nil, "lo.test", addrs("::ffff:127.0.0.1"), nil, Loopback},
		{"mapped private", nil, "p.test", addrs("::ffff:10.0.0.1"), nil, Private},
		{"metadata", nil, "m.test", addrs("169.254.169.254"), nil, Metadata},
		{"metadata v6", nil, "m.test", addrs("fd00:ec2::254"), nil, Metadata},
		{"mixed keeps the public", nil, "mix.test", addrs("10.0.0.1", "93.184.216.34"), addrs("93.184.216.34"), ""},
		{"listed loopback", []string{"127.0.0.1"}, "lo.test", addrs("127.0.0.1", "::1"), addrs("127.0.0.1"), ""},
		{"listed, mapped answer", []string{"127.0.0.1"}, "lo.test", addrs("::ffff:127.0.0.1"), addrs("127.0.0.1"), ""},
		{"listed v6 in brackets", []string{"[fd00:ec2::254]"}, "m.test", addrs("fd00:ec2::254"), addrs("fd00:ec2::254"), ""},
		{"listed other address", []string{"10.0.0.2"}, "p.test", addrs("10.0.0.1"), nil, Private},
		{"literal host", nil, "127.0.0.1", nil, addrs("127.0.0.1"), ""},
		{"mapped literal host", nil, "::ffff:127.0.0.1", nil, addrs("127.0.0.1"), ""},
	} {
		calls := 0
		s := &Server{Allow: c.allow, Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			calls++
			return c.answer, nil
		}}
		got, refused, err := s.resolve(context.Background(), c.host)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		for i := range min(len(got), len(c.want)) {
			if got[i] != c.want[i] {
				t.Errorf("%s: %v, want %v", c.name, got, c.want)
			}
		}
		if (refused == nil) != (c.refused == "") || (refused != nil && refused.class != c.refused) {
			t.Errorf("%s: refused %+v, want %q", c.name, refused, c.refused)
		}
		if _, err := netip.ParseAddr(c.host); err == nil && calls != 0 {
			t.Errorf("%s: a literal host was looked up", c.name)
		} else if err != nil && calls != 1 {
			t.Errorf("%s: looked up %d times", c.name, calls)
		}
	}
}

// TestDialsCheckedAddress: through the real proxy, an allowed name is
// looked up once per connection and the proxy dials an IP:port it checked
// — the public one of a mixed answer — never the name (which a second
// lookup could answer differently). A name whose every address is refused
// (mapped loopback, metadata) gets the 403 and no dial at all.
func TestDialsCheckedAddress(t *testing.T) {
	defer goleak.VerifyNone(t)
	up, hits := countingServer(t)
	defer up.Close()
	answers := map[string][]netip.Addr{
		"cdn.test":    {netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("93.184.216.34")},
		"mapped.test": {netip.MustParseAddr("::ffff:127.0.0.1")},
		"meta.test":   {netip.MustParseAddr("169.254.169.254")},
		"meta6.test":  {netip.MustParseAddr("fd00:ec2::254")},
	}
	var mu sync.Mutex
	var lookups, dials []string
	s := &Server{
		Allow: []string{"*.test"},
		Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
			mu.Lock()
			lookups = append(lookups, host)
			mu.Unlock()
			return answers[host], nil
		},
		// The seam stands for the network: every dial lands on the test's
		// upstream, and is recorded.
		Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
			mu.Lock()
			dials = append(dials, addr)
			mu.Unlock()
			var d net.Dialer
			return d.DialContext(ctx, "tcp", up.Listener.Addr().String())
		},
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = s.Serve(ln) }()
	defer func() { s.Close(); <-done }()

	code, body := rawRequest(t, ln.Addr().String(), "GET http://cdn.test/x HTTP/1.1\r\nHost: cdn.test\r\n\r\n")
	if code != 200 || body != "upstream-ok host=cdn.test" {
		t.Errorf("cdn.test: %d %q", code, body)
	}
	for _, h := range []string{"mapped.test", "meta.test", "meta6.test"} {
		code, body := rawRequest(t, ln.Addr().String(), "CONNECT "+h+":443 HTTP/1.1\r\nHost: "+h+":443\r\n\r\n")
		if code != 403 || !strings.Contains(body, "list that address itself") {
			t.Errorf("%s: %d %q", h, code, body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"cdn.test", "mapped.test", "meta.test", "meta6.test"}; !slices.Equal(lookups, want) {
		t.Errorf("lookups %q, want %q", lookups, want)
	}
	if want := []string{"93.184.216.34:80"}; !slices.Equal(dials, want) {
		t.Errorf("dials %q, want %q", dials, want)
	}
	if hits.Load() != 1 {
		t.Errorf("%d requests reached the upstream, want 1", hits.Load())
	}
}
