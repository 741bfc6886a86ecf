package netproxy

import (
	"errors"
	"strings"
)

// The TLS ClientHello's server name (issue 47 item 9): a CONNECT tunnel to
// an allowed host must carry TLS for that same host. Without this check a
// process may CONNECT to an allowed name (a CDN's) and then ask, in the
// ClientHello, for any other site that CDN serves — domain fronting.
//
// The parser reads just enough of one TLS record (RFC 8446 §5.1, §4.1.2;
// RFC 6066 §3): the record header, a handshake of type client_hello whose
// whole message lies in that record, the fixed fields skipped by their
// lengths, then the extensions, of which server_name (type 0) alone is read
// — and encrypted_client_hello refused: it hides the name actually asked for.
// Every length is checked against what remains; anything malformed, or a
// ClientHello split over records (no client does that below 16 KiB), is an
// error, which the proxy treats as a refusal.

// Record limits: a record header is 5 bytes; a plaintext record carries at
// most 2^14 bytes, so the proxy never reads more than maxHelloRecord bytes
// of the client before deciding.
const (
	recordHeaderLen = 5
	maxRecordBody   = 1 << 14
	maxHelloRecord  = recordHeaderLen + maxRecordBody
)

const (
	recordHandshake       = 0x16
	handshakeClientHello  = 1
	extensionServerName   = 0
	extensionECH          = 0xfe0d // encrypted_client_hello (RFC 9849)
	extensionESNI         = 0xffce // its draft predecessor, encrypted_server_name
	serverNameTypeHost    = 0
	maxServerNameLen      = 255
	helloRandomAndVersion = 2 + 32
)

// Errors of the parser: the proxy refuses on any of them alike; they are
// distinct so tests can tell a non-TLS tunnel from a malformed hello.
var (
	errNotTLS       = errors.New("not a TLS handshake record")
	errNotHello     = errors.New("not a TLS ClientHello")
	errBadHello     = errors.New("malformed TLS ClientHello")
	errSplitHello   = errors.New("TLS ClientHello not within its first record")
	errBadName      = errors.New("malformed TLS server name")
	errTwoNames     = errors.New("more than one TLS server name")
	errRecordLength = errors.New("TLS record longer than 16 KiB")
	errECH          = errors.New("TLS ClientHello with an encrypted server name")
)

// helloRecordLen reads a record header: the record's whole length (header
// included), or an error if the bytes cannot start a ClientHello's record.
func helloRecordLen(hdr []byte) (int, error) {
	if len(hdr) < recordHeaderLen {
		return 0, errNotTLS
	}
	// Content type handshake; legacy_record_version 3.x (3.0 to 3.4 are
	// seen in the wild; anything else is not TLS).
	if hdr[0] != recordHandshake || hdr[1] != 3 || hdr[2] > 4 {
		return 0, errNotTLS
	}
	n := int(hdr[3])<<8 | int(hdr[4])
	if n == 0 {
		return 0, errNotHello
	}
	if n > maxRecordBody {
		return 0, errRecordLength
	}
	return recordHeaderLen + n, nil
}

// clientHelloSNI parses rec, one whole TLS record (header included), as a
// ClientHello and returns its host_name server name, "" when it has none.
// The name is returned only if it is a plausible DNS name (letters, digits,
// '-', '_', '.'; at most 255 bytes).
func clientHelloSNI(rec []byte) (string, error) {
	n, err := helloRecordLen(rec)
	if err != nil {
		return "", err
	}
	if len(rec) != n {
		return "", errBadHello
	}
	b := cursor(rec[recordHeaderLen:])
	typ, ok := b.u8()
	if !ok || typ != handshakeClientHello {
		return "", errNotHello
	}
	mlen, ok := b.u24()
	if !ok {
		return "", errBadHello
	}
	if mlen != len(b) {
		// Shorter: another message follows in the record, which no client
		// sends in its first flight. Longer: split over records.
		if mlen > len(b) {
			return "", errSplitHello
		}
		return "", errBadHello
	}
	if !b.skip(helloRandomAndVersion) || // legacy_version, random
		!b.skipVec8() || // legacy_session_id
		!b.skipVec16() || // cipher_suites
		!b.skipVec8() { // legacy_compression_methods
		return "", errBadHello
	}
	if len(b) == 0 {
		return "", nil // no extensions at all (a pre-TLS-1.2 client)
	}
	exts, ok := b.vec16()
	if !ok || len(b) != 0 {
		return "", errBadHello
	}
	name, seen := "", false
	for len(exts) > 0 {
		et, ok1 := exts.u16()
		data, ok2 := exts.vec16()
		if !ok1 || !ok2 {
			return "", errBadHello
		}
		if et == extensionECH || et == extensionESNI {
			// The name in the clear is then the provider's public one,
			// and the host asked for is hidden from the proxy: that is
			// fronting the proxy cannot check.
			return "", errECH
		}
		if et != extensionServerName {
			continue
		}
		if seen {
			return "", errTwoNames // an extension may appear once
		}
		seen = true
		if name, err = serverName(data); err != nil {
			return "", err
		}
	}
	return name, nil
}

// serverName reads the server_name extension's body: a list of names, of
// which at most one host_name (RFC 6066 §3).
func serverName(data cursor) (string, error) {
	list, ok := data.vec16()
	if !ok || len(data) != 0 || len(list) == 0 {
		return "", errBadName
	}
	name := ""
	for len(list) > 0 {
		nt, ok1 := list.u8()
		v, ok2 := list.vec16()
		if !ok1 || !ok2 {
			return "", errBadName
		}
		if nt != serverNameTypeHost {
			continue // no other type is defined; a server ignores it
		}
		if name != "" {
			return "", errTwoNames
		}
		if !validServerName(v) {
			return "", errBadName
		}
		name = string(v)
	}
	return name, nil
}

// validServerName accepts a DNS name's bytes, nothing that could be read
// two ways (no NUL, no space, no '%', no ':').
func validServerName(v []byte) bool {
	if len(v) == 0 || len(v) > maxServerNameLen {
		return false
	}
	for _, c := range v {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '_', c == '.':
		default:
			return false
		}
	}
	return true
}

// sameHost reports whether two host names (or IP literals) are the same:
// case-insensitively, a trailing dot ignored.
func sameHost(a, b string) bool {
	return strings.EqualFold(strings.TrimSuffix(a, "."), strings.TrimSuffix(b, "."))
}

// cursor reads big-endian fields off the front of a byte slice.
type cursor []byte

func (c *cursor) u8() (int, bool) {
	if len(*c) < 1 {
		return 0, false
	}
	v := int((*c)[0])
	*c = (*c)[1:]
	return v, true
}

func (c *cursor) u16() (int, bool) {
	if len(*c) < 2 {
		return 0, false
	}
	v := int((*c)[0])<<8 | int((*c)[1])
	*c = (*c)[2:]
	return v, true
}

func (c *cursor) u24() (int, bool) {
	if len(*c) < 3 {
		return 0, false
	}
	v := int((*c)[0])<<16 | int((*c)[1])<<8 | int((*c)[2])
	*c = (*c)[3:]
	return v, true
}

func (c *cursor) skip(n int) bool {
	if len(*c) < n {
		return false
	}
	*c = (*c)[n:]
	return true
}

// vec16 returns the vector with a 2-byte length at the front.
func (c *cursor) vec16() (cursor, bool) {
	n, ok := c.u16()
	if !ok || len(*c) < n {
		return nil, false
	}
	v := (*c)[:n]
	*c = (*c)[n:]
	return v, true
}

func (c *cursor) skipVec8() bool {
	n, ok := c.u8()
	return ok && c.skip(n)
}

func (c *cursor) skipVec16() bool {
	_, ok := c.vec16()
	return ok
}
