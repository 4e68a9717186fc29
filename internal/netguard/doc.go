// Package netguard is the one guard of every connection the platform
// makes to an address a user or an app chose: webhook callbacks
// (gateway/internal/webhook) and the reels media check (plugins/social).
// It sorts IP addresses into classes (Classify: loopback, private and
// link-local, shared CGNAT 100.64.0.0/10, cloud metadata such as
// 169.254.169.254 and Azure's 168.63.129.16, benchmarking 198.18.0.0/15,
// reserved and documentation ranges, and IPv4 hidden in NAT64, 6to4 or
// Teredo judged by where it leads), and its Dialer connects only to the
// classes a Reach allows: it resolves names itself, checks every address,
// and checks again in the socket's Control hook, on the address actually
// dialled, before any packet leaves (so DNS rebinding gains nothing).
//
// Cloud metadata, multicast and reserved addresses are never reachable;
// loopback and private networks only where the caller's Reach says so
// (development apps, an operator's --webhook-allow-private-networks).
// netguard decides nothing about URLs (schemes, credentials, redirects):
// each user of it keeps its own rules for those.
package netguard
