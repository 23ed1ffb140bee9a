// Package querylist decodes the long lists in the AWS query-protocol
// answers ferry reads at fleet scale: the instances of each group
// DescribeAutoScalingGroups answers with (AutoScaling), and the targets
// DescribeTargetHealth answers with (ELBv2). Both are client options for
// the SDK's own clients.
//
// At 50 services of 100 instances those lists are most of what a
// handler decodes (about 550 bytes an instance), and the SDK's generic
// decoder, built on encoding/xml's tokens, spends most of a 512 MB
// Lambda's share of a CPU on them. The option puts a deserializer in
// front of the SDK's for those two operations: it reads the answer with
// a small reader of the canonical form AWS writes, decodes each list
// member field by field into the SDK's own types, cuts the lists out of
// the answer, and lets the SDK's deserializer decode what is left (every
// other field, errors, metadata) before putting the lists back.
//
// It is exact or it stands aside. Names match regardless of case and
// unknown elements are skipped, as the SDK's decoder does; anything the
// reader does not read exactly as encoding/xml would (a namespace
// prefix, a comment, CDATA, an attribute or a non-ASCII character
// inside a list, a boolean or port not in its canonical spelling, a
// malformed answer) makes it hand the answer, as it came, to the SDK
// alone. So does an error status, and a rest whose decoding fails or
// counts other groups than the cut. The tests hold it to the SDK's
// decoder on every field of the types, and fuzz it against the same.
// The strings it decodes without an entity reference share one copy of
// the answer's text, which lives as long as any of them does.
// It reads; it owns no state.
package querylist
