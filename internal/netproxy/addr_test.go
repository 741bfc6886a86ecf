package netproxy

import (
	"context"
	"net/netip"
	"testing"
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
