package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Canonical returns the canonical encoding of r: defaults applied (on a
// copy; r is not changed), created_at in UTC, then JSON with object keys
// sorted, no insignificant whitespace, no HTML escaping, and null, empty
// strings, empty arrays and empty objects left out (they all mean
// "absent"). Two releases that ferry would run the same way have the same
// canonical encoding.
func Canonical(r *Release) ([]byte, error) {
	if r == nil {
		return nil, fmt.Errorf("canonical encoding: no release")
	}
	c := r.Clone()
	c.ApplyDefaults()
	if !c.CreatedAt.IsZero() {
		c.CreatedAt = c.CreatedAt.UTC()
	}
	raw, err := marshal(c)
	if err != nil {
		return nil, fmt.Errorf("canonical encoding: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var tree any
	if err := dec.Decode(&tree); err != nil {
		return nil, fmt.Errorf("canonical encoding: %w", err)
	}
	out, err := marshal(prune(tree))
	if err != nil {
		return nil, fmt.Errorf("canonical encoding: %w", err)
	}
	return out, nil
}

// Hash returns the hex SHA-256 of Canonical(r). hash(file) equals
// hash(file with defaults applied).
func Hash(r *Release) (string, error) {
	b, err := Canonical(r)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// IdentityHash is the hex SHA-256 of the canonical encoding of r without
// its identity proof: what the proof is bound to (a proof cannot sign a
// hash of itself).
func IdentityHash(r *Release) (string, error) {
	if r == nil {
		return "", fmt.Errorf("canonical encoding: no release")
	}
	c := r.Clone()
	c.Identity = nil
	return Hash(c)
}

// marshal encodes v as compact JSON without HTML escaping (maps have their
// keys sorted by encoding/json).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// prune drops null, "", [] and {} members of objects, recursively.
func prune(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			e = prune(e)
			if isEmpty(e) {
				delete(t, k)
				continue
			}
			t[k] = e
		}
	case []any:
		for i, e := range t {
			t[i] = prune(e)
		}
	}
	return v
}

func isEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case string:
		return t == ""
	case []any:
		return len(t) == 0
	case map[string]any:
		return len(t) == 0
	}
	return false
}

// ContentHash is the canonical hash of what r deploys: Hash with the
// fields that differ between two releases of the same content cleared
// (release_id, created_at, created_by, identity, rollback_of, heal_of,
// promotion_of, and move_from: where the config was, not what it runs).
// A rollback or a heal has the content hash of the release it copies.
func ContentHash(r *Release) (string, error) {
	if r == nil {
		return "", fmt.Errorf("canonical encoding: no release")
	}
	return Hash(AsOwn(r, &Release{}))
}

// AsOwn is a copy of r's content with the fields that make a release its
// own (those ContentHash clears) taken from own: what r would be as that
// release. A heal as the release it heals hashes as that release did.
func AsOwn(r, own *Release) *Release {
	c := r.Clone()
	c.ReleaseID, c.CreatedAt, c.CreatedBy, c.Identity = own.ReleaseID, own.CreatedAt, own.CreatedBy, own.Identity
	c.RollbackOf, c.HealOf, c.PromotionOf, c.MoveFrom = own.RollbackOf, own.HealOf, own.PromotionOf, own.MoveFrom
	return c
}
