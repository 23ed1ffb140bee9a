// Package limits holds every limit ferry enforces, in one place, so the
// validator, the schema, the client and the README quote the same numbers.
package limits
