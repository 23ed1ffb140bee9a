package release

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
)

// Rollout is a service's canary: its new group starts at the first step's
// capacity, and each step must hold its healthy target for
// StepWaitSeconds (at least the service's stability window), with every
// alarm the release names clear, before the next. The previous fleet
// serves alongside until the last step, which is always the whole group
// ("100%"). Without a rollout, the group starts at its whole capacity.
type Rollout struct {
	Steps []Step `json:"steps"`
	// StepWaitSeconds is how long each step but the last must hold its
	// healthy target before the next; the service's stability window when
	// shorter.
	StepWaitSeconds int `json:"step_wait_seconds,omitempty"`
}

// Step is one step of a rollout: N instances (a JSON number), or N
// percent of the group's whole capacity when Percent (a JSON string like
// "25%").
type Step struct {
	N       int
	Percent bool
}

// stepPercentRe is a step written as a percentage, without a leading
// zero (as the schema has it); its range is Validate's to check.
var stepPercentRe = regexp.MustCompile(`^(0|[1-9][0-9]{0,3})%$`)

// stepShape says what a step must look like, for errors.
const stepShape = `a number of instances (like 1) or a percentage of the group (like "25%")`

// String is the step as a release writes it: "3" or "25%".
func (s Step) String() string {
	if s.Percent {
		return strconv.Itoa(s.N) + "%"
	}
	return strconv.Itoa(s.N)
}

// MarshalJSON writes a count as a number and a percentage as "N%".
func (s Step) MarshalJSON() ([]byte, error) {
	if s.Percent {
		return json.Marshal(s.String())
	}
	return json.Marshal(s.N)
}

// UnmarshalJSON reads a whole number or a string "N%".
func (s *Step) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err == nil {
		c, err := strconv.Atoi(string(n))
		if err != nil {
			return fmt.Errorf("a rollout step must be %s, not %s", stepShape, b)
		}
		*s = Step{N: c}
		return nil
	}
	var str string
	if err := json.Unmarshal(b, &str); err != nil {
		return fmt.Errorf("a rollout step must be %s, not %s", stepShape, b)
	}
	m := stepPercentRe.FindStringSubmatch(str)
	if m == nil {
		return fmt.Errorf("a rollout step must be %s, not %q", stepShape, str)
	}
	p, _ := strconv.Atoi(m[1]) // at most four digits
	*s = Step{N: p, Percent: true}
	return nil
}

// Whole reports whether s is the whole group: "100%".
func (s Step) Whole() bool { return s.Percent && s.N == 100 }

// ServiceRollout is service name's rollout; nil when it has none (all at
// once).
func (r *Release) ServiceRollout(name string) *Rollout {
	if s := r.Services[name]; s != nil && s.Rollout != nil && len(s.Rollout.Steps) > 0 {
		return s.Rollout
	}
	return nil
}
