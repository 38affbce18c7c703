package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// ErrBlockedAddress is returned for a URL or address the SSRF guard
// refuses.
var ErrBlockedAddress = errors.New("blocked address")

// blockedPrefixes are ranges no fetch may reach besides those netip's
// predicates name (loopback, private, link-local, multicast, unspecified).
var blockedPrefixes = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8",         // "this network"
		"100.64.0.0/10",     // carrier-grade NAT
		"192.0.0.0/24",      // IETF protocol assignments
		"192.0.2.0/24",      // documentation
		"198.18.0.0/15",     // benchmarking
		"198.51.100.0/24",   // documentation
		"203.0.113.0/24",    // documentation
		"240.0.0.0/4",       // reserved, broadcast
		"fd00:ec2::254/128", // AWS metadata (inside fc00::/7 too)
		"2001:db8::/32",     // documentation
		"100::/64",          // discard
		"fec0::/10",         // site-local (deprecated)
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// embeddedV4 returns the IPv4 address an IPv6 address carries in the
// translation formats (IPv4-mapped, NAT64 64:ff9b::/96, 6to4 2002::/16,
// IPv4-compatible ::a.b.c.d), so a private IPv4 address cannot hide in one.
func embeddedV4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	if a.Is4In6() {
		return a.Unmap(), true
	}
	b := a.As16()
	switch {
	case netip.MustParsePrefix("64:ff9b::/96").Contains(a), netip.MustParsePrefix("64:ff9b:1::/48").Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case netip.MustParsePrefix("2002::/16").Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	case netip.MustParsePrefix("::/96").Contains(a) && !a.IsUnspecified() && !a.IsLoopback():
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	}
	return netip.Addr{}, false
}

// blockedAddr explains why a may not be fetched, or returns "".
func blockedAddr(a netip.Addr) string {
	a = a.WithZone("")
	if v4, ok := embeddedV4(a); ok {
		if why := blockedAddr(v4); why != "" {
			return why + " (inside an IPv6 address)"
		}
	}
	switch {
	case a.IsLoopback():
		return "a loopback address"
	case a.IsPrivate():
		return "a private network address"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "a link-local address (cloud metadata lives there)"
	case a.IsUnspecified():
		return "an unspecified address"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "a multicast address"
	}
	for _, p := range blockedPrefixes {
		if p.Contains(a) {
			return "a reserved or internal address"
		}
	}
	return ""
}

// parseLooseIPv4 reads the IPv4 spellings inet_aton accepts and URL
// parsers pass as host names: decimal (2130706433), octal (0177.0.0.1),
// hex (0x7f.1), and shortened forms (127.1).
func parseLooseIPv4(host string) (netip.Addr, bool) {
	parts := strings.Split(host, ".")
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	var nums []uint64
	for _, p := range parts {
		if p == "" {
			return netip.Addr{}, false
		}
		n, err := strconv.ParseUint(p, 0, 32) // 0x.., 0.. octal, decimal
		if err != nil {
			return netip.Addr{}, false
		}
		nums = append(nums, n)
	}
	var v uint64
	last := len(nums) - 1
	for i, n := range nums[:last] {
		if n > 255 {
			return netip.Addr{}, false
		}
		v |= n << (24 - 8*i)
	}
	if nums[last] >= 1<<(8*(4-last)) {
		return netip.Addr{}, false
	}
	v |= nums[last]
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// checkURL refuses URLs that are not plain http(s) to a host, carry
// credentials, or name a blocked address literally (in any spelling).
func checkURL(u *url.URL, allowPrivate bool) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("only http and https URLs can be fetched (got %q)", u.Scheme)
	}
	if u.User != nil {
		return errors.New("URLs with a user name or password are not fetched")
	}
	host := strings.TrimSuffix(u.Hostname(), ".")
	if host == "" {
		return errors.New("the URL has no host")
	}
	if allowPrivate {
		return nil
	}
	lower := strings.ToLower(host)
	if lower == "localhost" || strings.HasSuffix(lower, ".localhost") || lower == "metadata.google.internal" {
		return fmt.Errorf("%w: %s is a local name", ErrBlockedAddress, host)
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		var ok bool
		if a, ok = parseLooseIPv4(host); !ok {
			return nil // a name: checked once resolved, at dial time
		}
	}
	if why := blockedAddr(a); why != "" {
		return fmt.Errorf("%w: %s is %s", ErrBlockedAddress, host, why)
	}
	return nil
}

// guardedDialer resolves a host itself, refuses it when any address it
// resolves to is blocked, and connects to exactly the address it checked:
// a DNS answer that changes between check and connect (rebinding) cannot
// slip a private address in. It runs on every connection, redirects
// included.
type guardedDialer struct {
	allowPrivate bool
	resolve      func(ctx context.Context, host string) ([]netip.Addr, error)
	dial         func(ctx context.Context, network, addr string) (net.Conn, error)
}

func (g guardedDialer) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if a, ok := parseLooseIPv4(host); ok {
		addrs = []netip.Addr{a}
	} else if addrs, err = g.resolve(ctx, host); err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	if !g.allowPrivate {
		for _, a := range addrs {
			if why := blockedAddr(a); why != "" {
				return nil, fmt.Errorf("%w: %s resolves to %s", ErrBlockedAddress, host, why)
			}
		}
	}
	var last error
	for _, a := range addrs {
		conn, err := g.dial(ctx, network, net.JoinHostPort(a.Unmap().String(), port))
		if err == nil {
			return conn, nil
		}
		last = err
	}
	return nil, last
}

// systemResolve looks a host up with the system resolver.
func systemResolve(ctx context.Context, host string) ([]netip.Addr, error) {
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	return ips, nil
}
