package pipeline

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/release"
	envtarget "github.com/ferryhq/ferry/internal/target"
)

var update = flag.Bool("update", false, "rewrite the .problems files of testdata/pipelines/invalid")

var testdata = filepath.Join("..", "..", "testdata")

func readPipeline(t *testing.T, name string) *Pipeline {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testdata, "pipelines", name))
	require.NoError(t, err)
	p, err := Decode(data)
	require.NoError(t, err)
	return p
}

func baseRelease(t *testing.T) *release.Release {
	t.Helper()
	r, err := release.ReadTemplate(filepath.Join(testdata, "deploy-test-release.json"))
	require.NoError(t, err)
	return r
}

func problemsOfErr(t *testing.T, err error) []string {
	t.Helper()
	var bad *InvalidError
	require.True(t, errors.As(err, &bad), "%v", err)
	return bad.Problems
}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(Schema()))
	require.NoError(t, err)
	c := jsonschema.NewCompiler()
	require.NoError(t, c.AddResource(SchemaID, doc))
	s, err := c.Compile(SchemaID)
	require.NoError(t, err)
	return s
}

// TestValidPipelines: every pipeline of testdata/pipelines agrees with the
// schema and the validator, and the seed's release can be promoted
// through it.
func TestValidPipelines(t *testing.T) {
	schema := compileSchema(t)
	files, err := filepath.Glob(filepath.Join(testdata, "pipelines", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			p, err := Decode(data)
			require.NoError(t, err)
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
			require.NoError(t, err)
			assert.NoError(t, schema.Validate(inst))
			assert.NoError(t, p.Check(baseRelease(t)))
		})
	}
}

// TestInvalidCorpus: every pipeline of testdata/pipelines/invalid gives
// exactly the problems of its .problems file (refreshed with -update); the
// schema refuses those it can see.
func TestInvalidCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testdata, "pipelines", "invalid", "*.json"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 6)
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			p, err := Decode(data)
			require.Error(t, err)
			assert.Nil(t, p)
			got := strings.Join(problemsOfErr(t, err), "\n")
			golden := file + ".problems"
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(got+"\n"), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "missing %s (run go test -update)", golden)
			assert.Equal(t, strings.TrimSuffix(string(want), "\n"), got)
		})
	}
}

// TestRelease: each target of each stage deploys the release with its
// own config name (named targets of a wave: CONFIG-NAME), account, region
// and overrides, {{CONFIG_NAME}} replaced in names, and the base's digest;
// the base release is not changed.
func TestRelease(t *testing.T) {
	p := readPipeline(t, "deploy-test.json")
	base := baseRelease(t)
	before, err := release.Canonical(base)
	require.NoError(t, err)
	digest, err := Digest(base)
	require.NoError(t, err)

	type want struct {
		config, account, region, instanceType string
		min, max                              int
		sgs                                   []string
	}
	for _, tt := range []struct {
		i, j int
		want want
	}{
		{0, 0, want{"development", "111111111111", "us-east-1", "t2.nano", 0, 0, []string{"ec2::coinbase/deploy-test::development"}}},
		{1, 0, want{"staging", "111111111111", "us-east-1", "t2.nano", 0, 0, []string{"ec2::coinbase/deploy-test::staging"}}},
		{2, 0, want{"production-use1", "222222222222", "us-east-1", "t3.small", 2, 4, []string{"ec2::coinbase/deploy-test::production-use1"}}},
		{2, 1, want{"production-euw1", "222222222222", "eu-west-1", "t3.small", 2, 4, []string{"ec2::coinbase/deploy-test::production-euw1"}}},
	} {
		t.Run(tt.want.config, func(t *testing.T) {
			r, err := p.Release(base, tt.i, tt.j)
			require.NoError(t, err)
			web := r.Services["web"]
			var min, max int
			if web.Autoscaling != nil {
				min, max = web.Autoscaling.MinSize, web.Autoscaling.MaxSize
			}
			assert.Equal(t, tt.want, want{r.ConfigName, r.AccountID, r.Region, web.InstanceType, min, max, web.SecurityGroups})
			assert.Equal(t, base.UserData, r.UserData)
			assert.Equal(t, base.AMI, r.AMI)
			if tt.i > 0 {
				assert.Equal(t, "coinbase-deploy-test-"+r.ConfigName, web.Profile)
				assert.Equal(t, []string{"cdt-" + r.ConfigName + "-web"}, web.ELBs)
				assert.Equal(t, []string{"cdt-" + r.ConfigName + "-web"}, web.TargetGroups)
			} else {
				assert.Equal(t, base.Services["web"].Profile, web.Profile)
			}
			got, err := Digest(r)
			require.NoError(t, err)
			assert.Equal(t, digest, got, "parity: every stage deploys the artifact")
			assert.NoError(t, r.Validate(false))
		})
	}
	after, err := release.Canonical(base)
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "the base release is not changed")

	moved := base.Clone()
	moved.MoveFrom = &envtarget.Target{AccountID: "111111111111", Region: "us-west-2"}
	r, err := p.Release(moved, 2, 1)
	require.NoError(t, err)
	assert.Nil(t, r.MoveFrom, "where the first stage's config moved from is nothing of another's")

	_, err = p.Release(base, 3, 0)
	assert.ErrorIs(t, err, errNoStage)
	_, err = p.Release(base, 2, 2)
	assert.ErrorIs(t, err, errNoStage)
}

// TestDigest: the digest ignores the environment facts, and the fields
// two releases of the same content differ in, and nothing else.
func TestDigest(t *testing.T) {
	base := baseRelease(t)
	base.Assets = map[string]*release.Asset{"app": {Path: "app.tar.gz", SHA256: strings.Repeat("a", 64), Size: 10}}
	base.Lifecycle = map[string]*release.LifecycleHook{"drain": {Transition: release.Transitions[1], Role: "drain-role", SNS: "drain-topic"}}
	digest, err := Digest(base)
	require.NoError(t, err)
	for _, tt := range []struct {
		name string
		edit func(r *release.Release)
		same bool
	}{
		{"config", func(r *release.Release) { r.ConfigName = "production" }, true},
		{"target", func(r *release.Release) { r.AccountID, r.Region, r.Qualifier = "222222222222", "eu-west-1", "blue" }, true},
		{"subnets", func(r *release.Release) { r.Subnets = []string{"other"} }, true},
		{"instance type", func(r *release.Release) { r.Services["web"].InstanceType = "m5.large" }, true},
		{"capacity", func(r *release.Release) { r.Services["web"].Autoscaling = &release.Autoscaling{MinSize: 3, MaxSize: 9} }, true},
		{"names", func(r *release.Release) {
			w := r.Services["web"]
			w.SecurityGroups, w.ELBs, w.TargetGroups, w.Subnets = []string{"sg"}, []string{"elb"}, []string{"tg"}, []string{"s"}
		}, true},
		{"release id and who", func(r *release.Release) { r.ReleaseID, r.CreatedBy, r.RollbackOf = "r9", "alice", "r1" }, true},
		{"a move", func(r *release.Release) {
			r.MoveFrom = &envtarget.Target{AccountID: "222222222222", Region: "eu-west-1"}
		}, true},
		{"asset path", func(r *release.Release) { r.Assets["app"].Path = "elsewhere/app.tar.gz" }, true},
		{"ami", func(r *release.Release) { r.AMI = "ubuntu-2" }, false},
		{"user data", func(r *release.Release) { r.UserData += "\n# changed" }, false},
		{"asset content", func(r *release.Release) { r.Assets["app"].SHA256 = strings.Repeat("b", 64) }, false},
		{"a service more", func(r *release.Release) { r.Services["worker"] = &release.Service{InstanceType: "t2.nano"} }, false},
		{"a service's ami", func(r *release.Release) { r.Services["web"].AMI = "other" }, false},
		{"scaling policy", func(r *release.Release) {
			r.Services["web"].Autoscaling = &release.Autoscaling{Policies: []release.Policy{{Type: "cpu_scale_up", Threshold: 80, ScalingAdjustment: 1}}}
		}, false},
		{"alarms", func(r *release.Release) {
			r.Alarms = []string{"errors"}
			r.Services["web"].Alarms = []string{"web-errors"}
		}, true},
		{"instance profile", func(r *release.Release) { r.Services["web"].Profile = "other-profile" }, true},
		{"a hook's role and topic", func(r *release.Release) {
			r.Lifecycle["drain"].Role, r.Lifecycle["drain"].SNS = "other-role", "other-topic"
		}, true},
		{"a hook's transition", func(r *release.Release) { r.Lifecycle["drain"].Transition = release.Transitions[0] }, false},
		{"a lifecycle hook more", func(r *release.Release) {
			r.Lifecycle["launch"] = &release.LifecycleHook{Transition: release.Transitions[0], Role: "a", SNS: "b"}
		}, false},
		{"version", func(r *release.Release) { r.Version = "1.2.4" }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := base.Clone()
			tt.edit(r)
			got, err := Digest(r)
			require.NoError(t, err)
			assert.Equal(t, tt.same, got == digest)
		})
	}
}

// TestCheck: a release the pipeline cannot promote is refused with every
// problem, a derived release's prefixed with the target deploying it.
func TestCheck(t *testing.T) {
	p := readPipeline(t, "deploy-test.json")
	for _, tt := range []struct {
		name string
		edit func(r *release.Release)
		want []string
	}{
		{"another project", func(r *release.Release) { r.ProjectName = "other/project" },
			[]string{`release.project_name: "other/project" is not the pipeline's project "coinbase/deploy-test"`}},
		{"a config the pipeline does not deploy", func(r *release.Release) { r.ConfigName = "qa" },
			[]string{`release.config_name: "qa" is no config of the pipeline (development, staging, production-use1, production-euw1): each stage sets its own`}},
		{"an overridden service missing", func(r *release.Release) { r.Services["api"] = r.Services["web"]; delete(r.Services, "web") },
			[]string{"stages[1].overrides.services.web: no service of the release", "stages[2].overrides.services.web: no service of the release"}},
		{"a name too long once expanded", func(r *release.Release) {
			r.Services["web"].ELBs = []string{"coinbase-deploy-test-{{CONFIG_NAME}}"}
			p.Stages[2].Overrides.Services["web"].ELBs = nil
		},
			[]string{
				`release.services.web.elbs[0]: in the release of target stages[2].targets[0] (config production-use1): must be at most 32 characters`,
				`release.services.web.elbs[0]: in the release of target stages[2].targets[1] (config production-euw1): must be at most 32 characters`,
			}},
		{"an override too long once expanded: the pipeline's", func(r *release.Release) {
			p.Stages[2].Overrides.Services["web"].ELBs = []string{"coinbase-deploy-test-{{CONFIG_NAME}}"}
		},
			[]string{
				`stages[2].overrides.services.web.elbs: makes the release of target stages[2].targets[0] (config production-use1) invalid: services.web.elbs[0]: must be at most 32 characters`,
				`stages[2].overrides.services.web.elbs: makes the release of target stages[2].targets[1] (config production-euw1) invalid: services.web.elbs[0]: must be at most 32 characters`,
			}},
		{"a lifecycle hook the release does not have", func(r *release.Release) {
			p.Stages[1].Overrides.Lifecycle = map[string]*HookOverrides{"drain": {Role: "drain-{{CONFIG_NAME}}"}}
		},
			[]string{"stages[1].overrides.lifecycle.drain: no lifecycle hook of the release"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p = readPipeline(t, "deploy-test.json")
			r := baseRelease(t)
			tt.edit(r)
			err := p.Check(r)
			require.Error(t, err)
			assert.Equal(t, tt.want, problemsOfErr(t, err))
		})
	}
}

// FuzzDecode: no input makes Decode panic; what it accepts validates and
// its every target deploys a valid config name of its own.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(testdata, "pipelines", "*.json"))
	more, _ := filepath.Glob(filepath.Join(testdata, "pipelines", "invalid", "*.json"))
	for _, file := range append(files, more...) {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Decode(data)
		if err != nil {
			assert.Nil(t, p)
			return
		}
		require.NoError(t, p.Validate())
		seen := map[string]bool{}
		for _, s := range p.Stages {
			for _, tg := range s.Targets {
				c := TargetConfig(s, tg)
				assert.Empty(t, release.CheckConfigName(c))
				assert.False(t, seen[c], c)
				seen[c] = true
			}
		}
	})
}
