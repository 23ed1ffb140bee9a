package pipeline

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/release"
)

// Request asks the deployer to promote a release through a pipeline: what
// `ferry pipeline start` stores at naming.PromotionRequestKey (under the
// first stage's config, so whoever may deploy that config may start a
// promotion) and passes as the execution's input. Its identity proof is
// bound to IdentityHash: the pipeline, the release and the id together.
type Request struct {
	PromotionID string            `json:"promotion_id"`
	CreatedAt   time.Time         `json:"created_at"`
	CreatedBy   string            `json:"created_by,omitempty"`
	Pipeline    *Pipeline         `json:"pipeline"`
	Release     *release.Release  `json:"release"`
	Identity    *release.Identity `json:"identity,omitempty"`
}

// MaxRequestBytes is the largest request: it is a promotion execution's
// input, under "promotion".
const MaxRequestBytes = limits.StepFunctionsPayloadBytes - len(`{"promotion":}`)

// requestDoc is a request as JSON, its documents decoded by their own
// strict decoders.
type requestDoc struct {
	PromotionID string            `json:"promotion_id"`
	CreatedAt   time.Time         `json:"created_at"`
	CreatedBy   string            `json:"created_by,omitempty"`
	Pipeline    json.RawMessage   `json:"pipeline"`
	Release     json.RawMessage   `json:"release"`
	Identity    *release.Identity `json:"identity,omitempty"`
}

// DecodeRequest decodes and checks a promotion request: its id (a release
// id: every target's release has it), its pipeline (Decode), its release
// (release.Decode, then the pipeline's Check of every target's release)
// and that both name one project. The error is an *InvalidError.
func DecodeRequest(data []byte) (*Request, error) {
	if len(data) > MaxRequestBytes {
		return nil, &InvalidError{Problems: []string{fmt.Sprintf("request: %d bytes, over the limit of %d", len(data), MaxRequestBytes)}}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var doc requestDoc
	if err := dec.Decode(&doc); err != nil {
		return nil, &InvalidError{Problems: []string{"request: " + err.Error()}}
	}
	if err := release.ValidateReleaseID(doc.PromotionID); err != nil {
		return nil, &InvalidError{Problems: []string{"request.promotion_id: " + err.Error()}}
	}
	if doc.CreatedAt.IsZero() {
		return nil, &InvalidError{Problems: []string{"request.created_at: required"}}
	}
	p, err := Decode(doc.Pipeline)
	if err != nil {
		return nil, err
	}
	r, err := release.Decode(doc.Release)
	if err != nil {
		return nil, &InvalidError{Problems: prefixed("release", problemsOf(err))}
	}
	if err := p.Check(r); err != nil {
		return nil, err
	}
	return &Request{PromotionID: doc.PromotionID, CreatedAt: doc.CreatedAt.UTC(), CreatedBy: doc.CreatedBy,
		Pipeline: p, Release: r, Identity: doc.Identity}, nil
}

func prefixed(path string, probs []string) []string {
	out := make([]string, len(probs))
	for i, p := range probs {
		out[i] = path + "." + p
	}
	return out
}

// FirstConfig is the config of the request's first stage (its first
// target's), under which its request and record are kept.
func (q *Request) FirstConfig() string {
	s := q.Pipeline.Stages[0]
	return TargetConfig(s, s.Targets[0])
}

// Canonical is the request's canonical JSON (the release in its canonical
// encoding): what is stored and passed as the execution's input.
func (q *Request) Canonical() ([]byte, error) {
	rel, err := release.Canonical(q.Release)
	if err != nil {
		return nil, err
	}
	pipe, err := json.Marshal(q.Pipeline)
	if err != nil {
		return nil, err
	}
	return json.Marshal(requestDoc{PromotionID: q.PromotionID, CreatedAt: q.CreatedAt.UTC(), CreatedBy: q.CreatedBy,
		Pipeline: pipe, Release: rel, Identity: q.Identity})
}

// Hash is the hex SHA-256 of the request's canonical JSON.
func (q *Request) Hash() (string, error) {
	b, err := q.Canonical()
	if err != nil {
		return "", err
	}
	return sha256Hex(b), nil
}

// IdentityHash is Hash without the identity proof: what the proof binds.
func (q *Request) IdentityHash() (string, error) {
	c := *q
	c.Identity = nil
	return c.Hash()
}

// PipelineHash is the hex SHA-256 of a pipeline's canonical JSON: a
// registered pipeline (naming.PipelineKey) and a request's are the same
// pipeline when their hashes are.
func PipelineHash(p *Pipeline) (string, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return "", err
	}
	return sha256Hex(b), nil
}

// Approval is a person's approval of a promotion into one stage: what
// `ferry pipeline approve` stores at naming.ApprovalKey under a config of
// that stage. Its identity proof, bound to IdentityHash, names who
// approved; the deployer accepts it only for that promotion, stage and
// artifact.
type Approval struct {
	PromotionID string            `json:"promotion_id"`
	Stage       string            `json:"stage"`
	Digest      string            `json:"digest"`
	CreatedAt   time.Time         `json:"created_at"`
	CreatedBy   string            `json:"created_by,omitempty"`
	Identity    *release.Identity `json:"identity,omitempty"`
}

// IdentityHash is the hex SHA-256 of the approval's JSON without its
// identity proof.
func (a Approval) IdentityHash() (string, error) {
	a.Identity = nil
	a.CreatedAt = a.CreatedAt.UTC()
	b, err := json.Marshal(a)
	if err != nil {
		return "", err
	}
	return sha256Hex(b), nil
}

// Hash is the hex SHA-256 of the approval's canonical JSON, its identity
// proof included: what names one approval as given, whatever spelling of
// its JSON carried it (a verified approval is of one Hash).
func (a Approval) Hash() (string, error) {
	a.CreatedAt = a.CreatedAt.UTC()
	b, err := json.Marshal(a)
	if err != nil {
		return "", err
	}
	return sha256Hex(b), nil
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// OnePromotionRule is the rule the deployer's Promote task enforces, as
// ferry's help and errors state it.
const OnePromotionRule = "One promotion of a pipeline (its project and first config) runs at a time: " +
	"another is refused while one runs; halt it or wait for its end."

// SamePipeline reports whether raw, a registered pipeline
// (naming.PipelineKey), is the pipeline of hash sum (PipelineHash); a
// registration that does not decode is not.
func SamePipeline(raw []byte, sum string) bool {
	p, err := Decode(raw)
	if err != nil {
		return false
	}
	got, err := PipelineHash(p)
	return err == nil && got == sum
}
