package release

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/target"
)

func TestApplyDefaults(t *testing.T) {
	cases := []struct {
		name string
		in   func(r *Release)
		want func(r *Release)
	}{
		{"timeout", func(r *Release) {}, func(r *Release) { r.Timeout = 600 }},
		{"timeout kept", func(r *Release) { r.Timeout = 30 }, func(r *Release) { r.Timeout, r.StableSeconds = 30, ptr(15) }},
		{"stable seconds kept", func(r *Release) { r.StableSeconds = ptr(0) }, func(r *Release) { r.StableSeconds = ptr(0) }},
		{"autoscaling absent", func(r *Release) {}, func(r *Release) {}},
		{"autoscaling zero sizes", func(r *Release) { r.Services["web"].Autoscaling = &Autoscaling{Spread: 0.5} },
			func(r *Release) { r.Services["web"].Autoscaling = &Autoscaling{MinSize: 1, MaxSize: 1, Spread: 0.5} }},
		{"max follows min", func(r *Release) { r.Services["web"].Autoscaling = &Autoscaling{MinSize: 3} },
			func(r *Release) { r.Services["web"].Autoscaling = &Autoscaling{MinSize: 3, MaxSize: 3} }},
		{"policies", func(r *Release) {
			r.Services["web"].Autoscaling = &Autoscaling{MinSize: 1, MaxSize: 2, Policies: []Policy{{Type: "cpu_scale_up", Threshold: 20, ScalingAdjustment: 1, Period: 60}}}
		}, func(r *Release) {
			r.Services["web"].Autoscaling = &Autoscaling{MinSize: 1, MaxSize: 2, Policies: []Policy{{Type: "cpu_scale_up", Threshold: 20, ScalingAdjustment: 1, Period: 60, EvaluationPeriods: 1, Cooldown: 300}}}
		}},
		{"ebs only with a size", func(r *Release) { r.Services["web"].EBSVolumeSize = 20 }, func(r *Release) {
			r.Services["web"].EBSVolumeSize, r.Services["web"].EBSVolumeType = 20, "gp3"
		}},
		{"ebs set kept", func(r *Release) {
			r.Services["web"].EBSVolumeSize, r.Services["web"].EBSVolumeType, r.Services["web"].EBSDeviceName = 20, "gp2", "/dev/sda1"
		}, func(r *Release) {
			r.Services["web"].EBSVolumeSize, r.Services["web"].EBSVolumeType, r.Services["web"].EBSDeviceName = 20, "gp2", "/dev/sda1"
		}},
		{"lifecycle heartbeat", func(r *Release) { r.Lifecycle = map[string]*LifecycleHook{"h": {Transition: "t"}} },
			func(r *Release) {
				r.Lifecycle = map[string]*LifecycleHook{"h": {Transition: "t", HeartbeatTimeout: 300}}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := valid()
			tc.in(got)
			got.ApplyDefaults()
			want := valid()
			want.Timeout, want.StableSeconds = 600, ptr(DefaultStableSeconds)
			want.Services["web"].Autoscaling = &Autoscaling{MinSize: 1, MaxSize: 1}
			tc.want(want)
			assert.Equal(t, want, got)
			again := got.Clone()
			again.ApplyDefaults()
			assert.Equal(t, got, again, "idempotent")
		})
	}
	var nilRelease *Release
	assert.NotPanics(t, nilRelease.ApplyDefaults)
}

func ptr[T any](v T) *T { return &v }

// TestServiceStableSeconds: a service's own window, else the release's,
// else the default (at most half the timeout).
func TestServiceStableSeconds(t *testing.T) {
	r := valid()
	r.Timeout = 600
	assert.Equal(t, DefaultStableSeconds, r.ServiceStableSeconds("web"))
	r.Timeout = 90
	assert.Equal(t, 45, r.ServiceStableSeconds("web"))
	r.StableSeconds = ptr(30)
	assert.Equal(t, 30, r.ServiceStableSeconds("web"))
	r.Services["web"].StableSeconds = ptr(0)
	assert.Equal(t, 0, r.ServiceStableSeconds("web"))
	c := r.Clone()
	*c.Services["web"].StableSeconds, *c.StableSeconds = 5, 6
	assert.Equal(t, 0, *r.Services["web"].StableSeconds, "Clone copies the windows")
	assert.Equal(t, 30, *r.StableSeconds)
}

func TestRenderUserData(t *testing.T) {
	vars := Vars{ReleaseID: "r1", ProjectName: "org/app", ConfigName: "prod", ServiceName: "web",
		Assets: map[string]AssetRef{"app": {URL: "https://b.s3.amazonaws.com/assets/abc", SHA256: "abc"}}}
	cases := []struct {
		name, tmpl, want string
		problems         []string
	}{
		{"plain", "#!/bin/sh\necho hi\n", "#!/bin/sh\necho hi\n", nil},
		{"every variable", "{{RELEASE_ID}} {{PROJECT_NAME}} {{CONFIG_NAME}} {{SERVICE_NAME}} {{ASSET_URL:app}} {{ASSET_SHA256:app}}",
			"r1 org/app prod web https://b.s3.amazonaws.com/assets/abc abc", nil},
		{"repeated", "{{SERVICE_NAME}}-{{SERVICE_NAME}}", "web-web", nil},
		{"not variables", "{{ lower }} {{lower}} {RELEASE_ID} {{RELEASE_ID", "{{ lower }} {{lower}} {RELEASE_ID} {{RELEASE_ID", nil},
		{"unknown", "{{X}} {{Y}}", "", []string{"user_data: unknown variable {{X}}", "user_data: unknown variable {{Y}}"}},
		{"unknown asset", "{{ASSET_URL:db}}", "", []string{`user_data: {{ASSET_URL:db}} names unknown asset "db"`}},
		{"empty asset name", "{{ASSET_URL:}}", "", []string{"user_data: {{ASSET_URL:}} needs an asset name, e.g. {{ASSET_URL:app}}"}},
		{"too large", strings.Repeat("x", 16380) + "{{RELEASE_ID}}{{RELEASE_ID}}{{RELEASE_ID}}", "",
			[]string{"user_data: rendered user data is 16386 bytes, more than the EC2 limit of 16384"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RenderUserData(tc.tmpl, vars)
			if tc.problems != nil {
				assert.Equal(t, tc.problems, problemsOf(t, err))
				assert.Empty(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestHash(t *testing.T) {
	file, err := DecodeFile([]byte(minimalFile))
	require.NoError(t, err)
	h1, err := Hash(file)
	require.NoError(t, err)
	assert.Regexp(t, `^[0-9a-f]{64}$`, h1)

	defaulted := file.Clone()
	defaulted.ApplyDefaults()
	h2, err := Hash(defaulted)
	require.NoError(t, err)
	assert.Equal(t, h1, h2, "hash(file) == hash(defaulted)")

	reordered, err := DecodeFile([]byte(`{"services":{"web":{"security_groups":["sg-web"],"instance_type":"t2.nano"}},"ami":"ubuntu","subnets":["a"],"config_name":"development","project_name":"coinbase/deploy-test","timeout":600}`))
	require.NoError(t, err)
	h3, err := Hash(reordered)
	require.NoError(t, err)
	assert.Equal(t, h1, h3, "key order and explicit defaults do not matter")

	empties := file.Clone()
	empties.Lifecycle = map[string]*LifecycleHook{}
	empties.Services["web"].Tags = map[string]string{}
	empties.Services["web"].ELBs = []string{}
	h4, err := Hash(empties)
	require.NoError(t, err)
	assert.Equal(t, h1, h4, "empty and absent are the same")

	changed := file.Clone()
	changed.Services["web"].InstanceType = "t2.micro"
	h5, err := Hash(changed)
	require.NoError(t, err)
	assert.NotEqual(t, h1, h5)

	sub := file.Clone()
	sub.Subnets = []string{"b"}
	h6, _ := Hash(sub)
	assert.NotEqual(t, h1, h6)

	zoned := file.Clone()
	zoned.CreatedAt = time.Date(2024, 1, 1, 2, 0, 0, 0, time.FixedZone("x", 7200))
	utc := file.Clone()
	utc.CreatedAt = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	hz, _ := Hash(zoned)
	hu, _ := Hash(utc)
	assert.Equal(t, hu, hz, "created_at is compared as an instant")

	canon, err := Canonical(file)
	require.NoError(t, err)
	assert.Equal(t, `{"ami":"ubuntu","config_name":"development","project_name":"coinbase/deploy-test","services":{"web":{"autoscaling":{"max_size":1,"max_terms":0,"min_size":1,"spread":0},"instance_type":"t2.nano","security_groups":["sg-web"]}},"stable_seconds":60,"subnets":["a"],"timeout":600}`, string(canon))

	html := file.Clone()
	html.UserData = "<a & b>"
	canon, err = Canonical(html)
	require.NoError(t, err)
	assert.Contains(t, string(canon), `"user_data":"<a & b>"`)

	_, err = Hash(nil)
	assert.Error(t, err)
}

// TestContentHash: two releases that deploy the same content, whoever
// asked for them, whatever they copy and wherever the config moved
// from, have one content hash; another image has another.
func TestContentHash(t *testing.T) {
	r := valid()
	want, err := ContentHash(r)
	require.NoError(t, err)
	again := r.Clone()
	again.ReleaseID, again.CreatedBy, again.RollbackOf, again.HealOf = "r9", "bob", "r1", "r2"
	again.MoveFrom = &target.Target{AccountID: "123456789012", Region: "us-east-1"}
	got, err := ContentHash(again)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	other := r.Clone()
	other.AMI = "ubuntu-2"
	got, err = ContentHash(other)
	require.NoError(t, err)
	assert.NotEqual(t, want, got)
}

func TestHashSurvivesUploadRoundTrip(t *testing.T) {
	r := valid()
	makeUploaded(r)
	data, err := json.Marshal(r)
	require.NoError(t, err)
	back, err := Decode(data)
	require.NoError(t, err)
	require.NoError(t, back.Validate(true))
	h1, _ := Hash(r)
	h2, _ := Hash(back)
	assert.Equal(t, h1, h2)
}

func TestServiceAccessors(t *testing.T) {
	r := valid()
	r.Services["api"] = &Service{InstanceType: "t2.nano", SecurityGroups: []string{"sg-1"}, AMI: "ami-1", Subnets: []string{"x"}, UserData: "api"}
	r.Services["cron"] = &Service{InstanceType: "t2.nano", SecurityGroups: []string{"sg-1"}}
	assert.Equal(t, []string{"api", "cron", "web"}, r.ServiceNames())
	assert.Equal(t, "ami-1", r.ServiceAMI("api"))
	assert.Equal(t, "ubuntu", r.ServiceAMI("web"))
	assert.Equal(t, "ubuntu", r.ServiceAMI("nope"))
	assert.Equal(t, []string{"x"}, r.ServiceSubnets("api"))
	assert.Equal(t, r.Subnets, r.ServiceSubnets("web"))
	r.ServiceSubnets("web")[0] = "changed"
	assert.Equal(t, "test_private_subnet_a", r.Subnets[0], "a copy")
	assert.Equal(t, "api", r.ServiceUserData("api"))
	assert.Equal(t, "#cloud-config\n", r.ServiceUserData("cron"))

	assert.False(t, r.UsesUserDataFile())
	r.UserData = UserDataFileMarker
	r.Services["cron"].UserData = UserDataFileMarker
	assert.True(t, r.UsesUserDataFile())
	r.ReplaceUserDataFile("#cloud-config\nx")
	assert.Equal(t, "#cloud-config\nx", r.UserData)
	assert.Equal(t, "#cloud-config\nx", r.Services["cron"].UserData)
	assert.Equal(t, "api", r.Services["api"].UserData)
	assert.False(t, r.UsesUserDataFile())
}

func TestClone(t *testing.T) {
	r := valid()
	r.Lifecycle = map[string]*LifecycleHook{"h": {Role: "r"}}
	r.Assets = map[string]*Asset{"a": {Path: "p"}}
	r.Services["web"].Tags = map[string]string{"k": "v"}
	r.Services["web"].Autoscaling = &Autoscaling{Policies: []Policy{{Type: "cpu_scale_up"}}}
	r.MoveFrom = &target.Target{AccountID: "123456789012", Region: "us-east-1"}
	c := r.Clone()
	require.Equal(t, r, c)
	c.MoveFrom.Region = "x"
	assert.Equal(t, "us-east-1", r.MoveFrom.Region)
	c.Lifecycle["h"].Role = "x"
	c.Assets["a"].Path = "x"
	c.Services["web"].Tags["k"] = "x"
	c.Services["web"].Autoscaling.Policies[0].Type = "x"
	c.Subnets[0] = "x"
	assert.Equal(t, "r", r.Lifecycle["h"].Role)
	assert.Equal(t, "p", r.Assets["a"].Path)
	assert.Equal(t, "v", r.Services["web"].Tags["k"])
	assert.Equal(t, "cpu_scale_up", r.Services["web"].Autoscaling.Policies[0].Type)
	assert.Equal(t, "test_private_subnet_a", r.Subnets[0])
}
