package target

import (
	"fmt"
	"regexp"

	"github.com/ferryhq/ferry/internal/limits"
)

// Target is one environment ferry deploys into: the account and region,
// and the qualifier of the bootstrap whose roles and bucket ferry uses
// there (naming.DeployRoleName).
type Target struct {
	AccountID string `json:"account_id"`
	Region    string `json:"region"`
	Qualifier string `json:"qualifier,omitempty"`
}

var (
	accountPattern = regexp.MustCompile(`^[0-9]{12}$`)
	regionPattern  = regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`)
)

// Validate reports what is wrong with a target (nil when it is usable).
func (t Target) Validate() error {
	switch {
	case !accountPattern.MatchString(t.AccountID):
		return fmt.Errorf("target account %q is not a 12-digit AWS account id", t.AccountID)
	case !regionPattern.MatchString(t.Region):
		return fmt.Errorf("target region %q is not an AWS region name", t.Region)
	case len(t.Qualifier) > limits.MaxQualifierLen:
		return fmt.Errorf("target qualifier %q is longer than %d characters", t.Qualifier, limits.MaxQualifierLen)
	}
	return nil
}

// Describe names the target for people: "account A region R", with
// " qualifier Q" when it has one.
func (t Target) Describe() string {
	s := "account " + t.AccountID + " region " + t.Region
	if t.Qualifier != "" {
		s += " qualifier " + t.Qualifier
	}
	return s
}
