package execution

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/ferryhq/ferry/internal/limits"
)

// The parts of a deploy's state that grow with its services (each
// service's health, the previous groups and images, the groups being
// retired) are marshalled packed: their JSON compressed with zlib (RFC
// 1950) and encoded as standard base64, under the part's name with the
// suffix "_z". Step Functions records the whole state document in each
// state's entered and exited events, so each health check's round
// records it three times, and a follower that reads a loop's newest
// report reads it once a poll: packed, a deploy of 50 services records
// about 4 KB a document, not 22 KB. The parts a Choice state reads
// (healthy, next_step, done, wait_seconds) stay plain. Unmarshalling
// reads a part packed or plain (a history recorded before it was packed).

// packedSuffix names a part's packed form ("services" -> "services_z").
const packedSuffix = "_z"

// pack is v's JSON, compressed and base64-encoded; "" when v is empty
// (nil, or a slice or map without elements), which unpack reads as v's
// zero value.
func pack(v any, empty bool) (string, error) {
	if empty {
		return "", nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	zw := zlibWriters.Get().(*zlib.Writer)
	defer zlibWriters.Put(zw)
	zw.Reset(&buf)
	if _, err := zw.Write(raw); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf.Bytes()), nil
}

// zlibWriters keeps zlib writers for pack: each holds some hundreds of
// kilobytes of compression state, and a handler packs several parts.
var zlibWriters = sync.Pool{New: func() any { return zlib.NewWriter(nil) }}

// maxUnpacked bounds what one packed part may inflate to: a part holds
// at most limits.MaxServices services' worth (about 25 KB), so four of
// Step Functions' payloads is ample, and bounds what a corrupt one costs.
const maxUnpacked = 4 * limits.StepFunctionsPayloadBytes

// unpack reads a part pack wrote into v (a pointer); "" leaves v as it
// is. name says which part, in the error.
func unpack(name, packed string, v any) error {
	if packed == "" {
		return nil
	}
	compressed, err := base64.StdEncoding.DecodeString(packed)
	if err != nil {
		return fmt.Errorf("%s%s: not base64: %w", name, packedSuffix, err)
	}
	zr, err := zlib.NewReader(bytes.NewReader(compressed))
	if err != nil {
		return fmt.Errorf("%s%s: not zlib: %w", name, packedSuffix, err)
	}
	defer zr.Close()
	raw, err := io.ReadAll(io.LimitReader(zr, maxUnpacked+1))
	if err != nil {
		return fmt.Errorf("%s%s: %w", name, packedSuffix, err)
	}
	if len(raw) > maxUnpacked {
		return fmt.Errorf("%s%s: inflates to more than %d bytes", name, packedSuffix, maxUnpacked)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s%s: %w", name, packedSuffix, err)
	}
	return nil
}

// omitted hides, in a wrapper that embeds a type, that type's field of
// the same JSON name: encoding/json prefers the shallower field, and an
// omitted one is never written.
type omitted *struct{}

// MarshalJSON writes Services packed (services_z).
func (h Health) MarshalJSON() ([]byte, error) {
	type plain Health
	z, err := pack(h.Services, len(h.Services) == 0)
	if err != nil {
		return nil, fmt.Errorf("health: services: %w", err)
	}
	return json.Marshal(struct {
		plain
		Services omitted `json:"services,omitempty"`
		Packed   string  `json:"services_z,omitempty"`
	}{plain: plain(h), Packed: z})
}

// UnmarshalJSON reads Services packed (services_z) or plain (services).
func (h *Health) UnmarshalJSON(data []byte) error {
	type plain Health
	w := struct {
		*plain
		Packed string `json:"services_z"`
	}{plain: (*plain)(h)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	return unpack("health.services", w.Packed, &h.Services)
}

// retireParts are Retire's parts packed together (groups_z).
type retireParts struct {
	Groups    []RetiringGroup  `json:"groups,omitempty"`
	Restoring []RestoringGroup `json:"restoring,omitempty"`
}

// MarshalJSON writes Groups and Restoring packed (groups_z).
func (r Retire) MarshalJSON() ([]byte, error) {
	type plain Retire
	z, err := pack(retireParts{r.Groups, r.Restoring}, len(r.Groups)+len(r.Restoring) == 0)
	if err != nil {
		return nil, fmt.Errorf("retire: groups: %w", err)
	}
	return json.Marshal(struct {
		plain
		Groups    omitted `json:"groups,omitempty"`
		Restoring omitted `json:"restoring,omitempty"`
		Packed    string  `json:"groups_z,omitempty"`
	}{plain: plain(r), Packed: z})
}

// UnmarshalJSON reads Groups and Restoring packed (groups_z) or plain.
func (r *Retire) UnmarshalJSON(data []byte) error {
	type plain Retire
	w := struct {
		*plain
		Packed string `json:"groups_z"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.Packed == "" {
		return nil
	}
	var parts retireParts
	if err := unpack("retire.groups", w.Packed, &parts); err != nil {
		return err
	}
	r.Groups, r.Restoring = parts.Groups, parts.Restoring
	return nil
}

// stateParts are State's parts packed together (previous_z).
type stateParts struct {
	Previous []string          `json:"previous,omitempty"`
	Images   map[string]string `json:"images,omitempty"`
}

// MarshalJSON writes Previous and Images packed (previous_z); Health and
// Retire pack their own parts.
func (s State) MarshalJSON() ([]byte, error) {
	type plain State
	z, err := pack(stateParts{s.Previous, s.Images}, len(s.Previous)+len(s.Images) == 0)
	if err != nil {
		return nil, fmt.Errorf("state: previous: %w", err)
	}
	return json.Marshal(struct {
		plain
		Previous omitted `json:"previous,omitempty"`
		Images   omitted `json:"images,omitempty"`
		Packed   string  `json:"previous_z,omitempty"`
	}{plain: plain(s), Packed: z})
}

// UnmarshalJSON reads Previous and Images packed (previous_z) or plain.
func (s *State) UnmarshalJSON(data []byte) error {
	type plain State
	w := struct {
		*plain
		Packed string `json:"previous_z"`
	}{plain: (*plain)(s)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	if w.Packed == "" {
		return nil
	}
	var parts stateParts
	if err := unpack("previous", w.Packed, &parts); err != nil {
		return err
	}
	s.Previous, s.Images = parts.Previous, parts.Images
	return nil
}

// packedParts are the keys of the packed parts, each with where its plain
// form goes in the object holding it: under the key named (Health's
// services), or, when "", its fields into that object (Retire's groups
// and restoring; the State's previous and images).
var packedParts = map[string]string{"services_z": "services", "groups_z": "", "previous_z": ""}

// Unpacked is the JSON document doc (a state document, or anything that
// holds one, such as a task's parameters) with every packed part, at any
// depth, replaced by its plain form, for people to read: what the
// deployer's handlers read it as. Numbers are kept as written; keys come
// out sorted. Text that is not JSON is returned as it is, with no error;
// a packed part that does not unpack is an error naming it, and doc is
// returned as it is.
func Unpacked(doc string) (string, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return doc, nil
	}
	v, err := unpackedValue(v)
	if err != nil {
		return doc, err
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return doc, err
	}
	return string(raw), nil
}

// unpackedValue is v (as decoded into any, with json.Number) with its
// packed parts unpacked, depth first.
func unpackedValue(v any) (any, error) {
	var err error
	switch v := v.(type) {
	case []any:
		for i := range v {
			if v[i], err = unpackedValue(v[i]); err != nil {
				return nil, err
			}
		}
	case map[string]any:
		for k := range v {
			if v[k], err = unpackedValue(v[k]); err != nil {
				return nil, err
			}
		}
		if err := unpackParts(v); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// unpackParts replaces the packed parts of obj with their plain form
// (see packedParts); a key named like one that does not hold a string is
// left alone.
func unpackParts(obj map[string]any) error {
	for key, into := range packedParts {
		packed, ok := obj[key].(string)
		if !ok {
			continue
		}
		var raw json.RawMessage
		if err := unpack(key[:len(key)-len(packedSuffix)], packed, &raw); err != nil {
			return err
		}
		var plain any
		if raw != nil {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			if err := dec.Decode(&plain); err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
		}
		delete(obj, key)
		if into != "" {
			obj[into] = plain
			continue
		}
		fields, _ := plain.(map[string]any)
		for k, f := range fields {
			obj[k] = f
		}
	}
	return nil
}
