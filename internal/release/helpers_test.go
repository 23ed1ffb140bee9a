package release

import (
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/failure"
)

var update = flag.Bool("update", false, "rewrite testdata/invalid/*.problems from the validator's output and testdata/schema.json from Schema")

// repoTestdata is the repository's testdata directory.
const repoTestdata = "../../testdata"

// problemsOf returns the problems of a *failure.BadReleaseError; nil for nil.
func problemsOf(t *testing.T, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var bad *failure.BadReleaseError
	require.True(t, errors.As(err, &bad), "want *failure.BadReleaseError, got %T: %v", err, err)
	return bad.Problems
}

// valid returns a small valid release file's release, defaults not applied.
func valid() *Release {
	return &Release{
		ProjectName: "coinbase/deploy-test",
		ConfigName:  "development",
		Subnets:     []string{"test_private_subnet_a", "test_private_subnet_b"},
		AMI:         "ubuntu",
		UserData:    "#cloud-config\n",
		Services: map[string]*Service{
			"web": {InstanceType: "t2.nano", SecurityGroups: []string{"sg-web"}},
		},
	}
}

// ruleCase is one case of a validation rule: mutate a valid release, then
// expect exactly these problems (nil: valid).
type ruleCase struct {
	name     string
	mutate   func(r *Release)
	uploaded bool
	want     []string
}

func runRuleCases(t *testing.T, cases []ruleCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := valid()
			if tc.uploaded {
				makeUploaded(r)
			}
			tc.mutate(r)
			got := problemsOf(t, r.Validate(tc.uploaded))
			if len(tc.want) == 0 {
				require.Empty(t, got)
				return
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// makeUploaded sets what the client sets on upload.
func makeUploaded(r *Release) {
	r.ReleaseID = "1715000000-abc123"
	r.CreatedAt = time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	r.CreatedBy = "arn:aws:iam::123456789012:user/alice"
	for _, a := range r.Assets {
		a.SHA256 = strings.Repeat("ab", 32)
		a.Size = 10
	}
}
