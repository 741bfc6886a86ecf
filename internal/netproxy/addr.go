package netproxy

import (
	"context"
	"net"
	"net/netip"
	"strings"

	"github.com/reinsdev/reins/internal/lazy"
)

// Which addresses an allowed name may lead to (issue 47 item 9). A name in
// sandbox.allowDomains says "this site", not "whatever its DNS says today":
// a name the process controls (or a listed one whose records change) could
// otherwise point the proxy — which runs outside the sandbox, on the host's
// network — at the host's own loopback services, the LAN, or the cloud's
// metadata endpoint that hands out credentials. So the proxy resolves an
// allowed name once, keeps only public addresses, and dials exactly the
// address it checked (an IP:port; no second lookup that could answer
// differently). An address the user wrote into allowDomains themselves
// ("127.0.0.1", "10.0.0.5") is theirs to reach, whether asked for as that
// literal or reached through a name.

// AddrClass says what kind of destination an IP address is.
type AddrClass string

// The classes. Everything but Public is refused for a name unless listed.
const (
	Public      AddrClass = "public"
	Loopback    AddrClass = "loopback"
	Private     AddrClass = "private"        // RFC 1918, fc00::/7 (and site-local fec0::/10)
	Shared      AddrClass = "shared (CGNAT)" // 100.64.0.0/10, RFC 6598
	LinkLocal   AddrClass = "link-local"     // 169.254/16, fe80::/10
	Unspecified AddrClass = "unspecified"    // 0.0.0.0/8, ::
	Multicast   AddrClass = "multicast"
	Metadata    AddrClass = "cloud metadata"
	Reserved    AddrClass = "reserved" // 240/4, broadcast, 192.0.0/24, 198.18/15, ::/96
)

// metadata (in addrNets) are the cloud providers' instance-metadata and host
// endpoints. Most lie in a class refused anyway; they are named so the
// refusal says what they are, and 168.63.129.16 (Azure's WireServer) is a
// public address that is none the less the host's.
// addrNets are the addresses and ranges Classify tests, built on first use
// (a package-level map or parsed prefix would be built at every start of
// reins; internal/importrules).
type addrNets struct {
	metadata                                          map[netip.Addr]bool
	cgnat, thisNet, ietf, benchmark, classE           netip.Prefix
	v4compat, nat64, nat64Local, sixToFour, siteLocal netip.Prefix
}

var nets = lazy.Value[addrNets]{New: func() addrNets {
	return addrNets{
		metadata: map[netip.Addr]bool{
			netip.MustParseAddr("169.254.169.254"): true, // AWS, GCP, Azure, OpenStack, …
			netip.MustParseAddr("169.254.170.2"):   true, // AWS ECS task credentials
			netip.MustParseAddr("fd00:ec2::254"):   true, // AWS over IPv6
			netip.MustParseAddr("168.63.129.16"):   true, // Azure WireServer
			netip.MustParseAddr("100.100.100.200"): true, // Alibaba Cloud
			netip.MustParseAddr("192.0.0.192"):     true, // Oracle Cloud
		},
		cgnat:      netip.MustParsePrefix("100.64.0.0/10"),
		thisNet:    netip.MustParsePrefix("0.0.0.0/8"),
		ietf:       netip.MustParsePrefix("192.0.0.0/24"),
		benchmark:  netip.MustParsePrefix("198.18.0.0/15"), // also fake-IP DNS of local proxies
		classE:     netip.MustParsePrefix("240.0.0.0/4"),   // and 255.255.255.255
		v4compat:   netip.MustParsePrefix("::/96"),         // deprecated IPv4-compatible
		nat64:      netip.MustParsePrefix("64:ff9b::/96"),  // RFC 6052: embeds an IPv4 address
		nat64Local: netip.MustParsePrefix("64:ff9b:1::/48"),
		sixToFour:  netip.MustParsePrefix("2002::/16"), // embeds an IPv4 address
		siteLocal:  netip.MustParsePrefix("fec0::/10"),
	}
}}

// Classify says what a is. An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is
// its IPv4 address, and so are the NAT64 and 6to4 forms that embed one
// (64:ff9b::a.b.c.d reaches a.b.c.d through a translator).
func Classify(a netip.Addr) AddrClass {
	a = a.WithZone("").Unmap()
	n := nets.Get()
	if n.metadata[a] {
		return Metadata
	}
	switch {
	case !a.IsValid():
		return Reserved
	case a.IsUnspecified():
		return Unspecified
	case a.IsLoopback():
		return Loopback
	case a.IsLinkLocalUnicast():
		return LinkLocal
	case a.IsMulticast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		return Multicast
	case a.IsPrivate(), n.siteLocal.Contains(a), n.nat64Local.Contains(a):
		return Private
	}
	if a.Is4() {
		switch {
		case n.cgnat.Contains(a):
			return Shared
		case n.thisNet.Contains(a):
			return Unspecified
		case n.ietf.Contains(a), n.benchmark.Contains(a), n.classE.Contains(a):
			return Reserved
		}
		return Public
	}
	b := a.As16()
	switch {
	case n.v4compat.Contains(a):
		return Reserved
	case n.nat64.Contains(a):
		return Classify(netip.AddrFrom4([4]byte(b[12:16])))
	case n.sixToFour.Contains(a):
		return Classify(netip.AddrFrom4([4]byte(b[2:6])))
	}
	return Public
}

// listedAddrs are the IP literals of an allow list: the addresses the user
// named themselves.
func listedAddrs(allow []string) []netip.Addr {
	var out []netip.Addr
	for _, e := range allow {
		e = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(e), "["), "]")
		if a, err := netip.ParseAddr(e); err == nil {
			out = append(out, a.Unmap())
		}
	}
	return out
}

// permitted reports whether the proxy may dial a for a name: a public
// address, or one the user listed.
func permitted(a netip.Addr, listed []netip.Addr) bool {
	if Classify(a) == Public {
		return true
	}
	a = a.Unmap()
	for _, l := range listed {
		if l == a {
			return true
		}
	}
	return false
}

// maxAddrs bounds how many of a name's addresses are tried.
const maxAddrs = 8

// refusedAddr says why no address of a name may be dialled.
type refusedAddr struct {
	addr  netip.Addr
	class AddrClass
}

// resolve turns an allowed host into the addresses the proxy may dial.
// An IP literal is itself (it passed the allow check, so the user named
// it: listed it, or allowed it when asked). A name is looked up once and
// only its permitted addresses are kept; if none is, the first refused one
// says why (refusedAddr). A lookup error is returned as is.
func (s *Server) resolve(ctx context.Context, host string) ([]netip.Addr, *refusedAddr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a.Unmap()}, nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	lookup := s.Resolve
	if lookup == nil {
		lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	addrs, err := lookup(ctx, host)
	if err != nil {
		return nil, nil, err
	}
	listed := listedAddrs(s.Allow)
	var out []netip.Addr
	var first *refusedAddr
	for _, a := range addrs {
		a = a.Unmap() // LookupNetIP may return IPv4 in its mapped form
		if !a.IsValid() {
			continue
		}
		if !permitted(a, listed) {
			if first == nil {
				first = &refusedAddr{a, Classify(a)}
			}
			continue
		}
		if len(out) < maxAddrs {
			out = append(out, a)
		}
	}
	if len(out) > 0 {
		return out, nil, nil
	}
	if first == nil {
		return nil, nil, &net.DNSError{Err: "no address", Name: host, IsNotFound: true}
	}
	return nil, first, nil
}

// dialAddrs dials the checked addresses in turn, within DialTimeout in all.
func (s *Server) dialAddrs(ctx context.Context, addrs []netip.Addr, port uint16) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	var err error
	for _, a := range addrs {
		var c net.Conn
		c, err = s.Dial(ctx, "tcp", netip.AddrPortFrom(a, port).String())
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, err
}
