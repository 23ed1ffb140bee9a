// Package limits holds every limit ferry enforces, in one place, so the
// validator, the schema, the client and the reference pages quote the same numbers:
// what AWS fixes (payload sizes, history length, name lengths, batch
// sizes) and the bounds ferry promises of its inputs (the largest release,
// the longest name, the longest timeout). ferry's tunable settings are
// package tuning's.
package limits
