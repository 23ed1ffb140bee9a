package release

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/naming"
	"github.com/ferryhq/ferry/internal/target"
)

func TestValidateValid(t *testing.T) {
	require.NoError(t, valid().Validate(false))
	r := valid()
	makeUploaded(r)
	require.NoError(t, r.Validate(true))
	assert.Equal(t, []string{"release: missing"}, problemsOf(t, (*Release)(nil).Validate(false)))
}

func TestValidateDoesNotChangeRelease(t *testing.T) {
	r := valid()
	before := r.Clone()
	require.NoError(t, r.Validate(false))
	assert.Equal(t, before, r)
}

func TestRuleProjectName(t *testing.T) {
	set := func(v string) func(*Release) { return func(r *Release) { r.ProjectName = v } }
	runRuleCases(t, []ruleCase{
		{"org/name", set("coinbase/deploy-test"), false, nil},
		{"dots and underscores", set("my.org/my_app.v2"), false, nil},
		{"at the length limit", set("o/" + strings.Repeat("n", 62)), false, nil},
		{"empty", set(""), false, []string{"project_name: required"}},
		{"no slash", set("deploy-test"), false, []string{`project_name: must be "org/name" with exactly one '/'`}},
		{"two slashes", set("a/b/c"), false, []string{`project_name: must be "org/name" with exactly one '/'`}},
		{"empty org", set("/name"), false, []string{`project_name: must be "org/name", each part lowercase letters, digits, '.', '_' and '-', starting with a letter or digit`}},
		{"empty name", set("org/"), false, []string{`project_name: must be "org/name", each part lowercase letters, digits, '.', '_' and '-', starting with a letter or digit`}},
		{"dot dot", set("org/a..b"), false, []string{`project_name: must not contain ".."`}},
		{"dot dot segment", set("../name"), false, []string{`project_name: must not contain ".."`}},
		{"dot segment", set("./name"), false, []string{`project_name: must be "org/name", each part lowercase letters, digits, '.', '_' and '-', starting with a letter or digit`}},
		{"uppercase", set("Coinbase/deploy"), false, []string{`project_name: must be "org/name", each part lowercase letters, digits, '.', '_' and '-', starting with a letter or digit`}},
		{"space", set("org/my app"), false, []string{`project_name: must be "org/name", each part lowercase letters, digits, '.', '_' and '-', starting with a letter or digit`}},
		{"control character", set("org/na\x00me"), false, []string{`project_name: must be "org/name", each part lowercase letters, digits, '.', '_' and '-', starting with a letter or digit`}},
		{"cyrillic look-alike", set("org/n\u0430me"), false, []string{`project_name: must be "org/name", each part lowercase letters, digits, '.', '_' and '-', starting with a letter or digit`}},
		{"too long", set("o/" + strings.Repeat("n", 63)), false, []string{"project_name: must be at most 64 characters"}},
	})
}

func TestRuleConfigName(t *testing.T) {
	set := func(v string) func(*Release) { return func(r *Release) { r.ConfigName = v } }
	const shape = "config_name: must be lowercase letters, digits and '-', starting with a letter or digit"
	runRuleCases(t, []ruleCase{
		{"simple", set("production"), false, nil},
		{"digits and dashes", set("us-1-blue"), false, nil},
		{"at the limit", set(strings.Repeat("c", 32)), false, nil},
		{"empty", set(""), false, []string{"config_name: required"}},
		{"too long", set(strings.Repeat("c", 33)), false, []string{"config_name: must be at most 32 characters"}},
		{"uppercase", set("Prod"), false, []string{shape}},
		{"leading dash", set("-prod"), false, []string{shape}},
		{"slash", set("prod/x"), false, []string{shape}},
		{"dot", set("prod.x"), false, []string{shape}},
		{"underscore", set("prod_x"), false, []string{shape}},
		{"newline", set("prod\n"), false, []string{shape}},
	})
}

func TestRuleServiceName(t *testing.T) {
	rename := func(name string) func(*Release) {
		return func(r *Release) { r.Services = map[string]*Service{name: r.Services["web"]} }
	}
	const shape = "service name must be lowercase letters, digits and '-', starting with a letter or digit"
	runRuleCases(t, []ruleCase{
		{"simple", rename("worker-2"), false, nil},
		{"uppercase", rename("Web"), false, []string{"services.Web: " + shape}},
		{"empty", rename(""), false, []string{`services[""]: service name required`}},
		{"dot", rename("a.b"), false, []string{`services["a.b"]: ` + shape}},
		{"too long", rename(strings.Repeat("s", 33)), false, []string{"services." + strings.Repeat("s", 33) + ": service name must be at most 32 characters"}},
	})
}

func TestRuleReleaseID(t *testing.T) {
	set := func(v string) func(*Release) { return func(r *Release) { r.ReleaseID = v } }
	const shape = "release_id: must be letters, digits and '-', starting with a letter or digit"
	runRuleCases(t, []ruleCase{
		{"uploaded", set("1715000000-AbC"), true, nil},
		{"missing when uploaded", set(""), true, []string{"release_id: required"}},
		{"absent from a file", set(""), false, nil},
		{"underscore", set("a_b"), true, []string{shape}},
		{"leading dash", set("-a"), true, []string{shape}},
		{"slash", set("a/b"), true, []string{shape}},
		{"too long", set(strings.Repeat("r", 65)), true, []string{"release_id: must be at most 64 characters"}},
		{"checked in a file too", set("a/b"), false, []string{shape}},
	})
}

func TestRuleUploadedFields(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"complete", func(r *Release) {}, true, nil},
		{"created_at missing", func(r *Release) { r.CreatedAt = time.Time{} }, true, []string{"created_at: required"}},
		{"created_by optional", func(r *Release) { r.CreatedBy = "" }, true, nil},
		{"created_by control", func(r *Release) { r.CreatedBy = "alice\nbob" }, true, []string{"created_by: must be printable text: no control or format characters, no leading, trailing or repeated spaces"}},
		{"created_by bidi override", func(r *Release) { r.CreatedBy = "alice\u202ebob" }, true, []string{"created_by: must be printable text: no control or format characters, no leading, trailing or repeated spaces"}},
		{"created_by trailing space", func(r *Release) { r.CreatedBy = "alice " }, true, []string{"created_by: must be printable text: no control or format characters, no leading, trailing or repeated spaces"}},
		{"created_by a name in full", func(r *Release) { r.CreatedBy = "José Álvarez-O'Brien" }, true, nil},
		{"created_by another script", func(r *Release) { r.CreatedBy = "山田 太郎" }, true, nil},
		{"created_by of exactly 512 bytes", func(r *Release) { r.CreatedBy = strings.Repeat("a", 512) }, true, nil},
		{"created_by too long", func(r *Release) { r.CreatedBy = strings.Repeat("a", 513) }, true, []string{"created_by: must be at most 512 bytes"}},
		{"user data file not replaced", func(r *Release) { r.UserData = UserDataFileMarker }, true,
			[]string{"user_data: {{USER_DATA_FILE}} must be replaced by the client with the user data file"}},
		{"service user data file not replaced", func(r *Release) { r.Services["web"].UserData = UserDataFileMarker }, true,
			[]string{"services.web.user_data: {{USER_DATA_FILE}} must be replaced by the client with the user data file"}},
		{"user data file allowed in a file", func(r *Release) { r.UserData = UserDataFileMarker }, false, nil},
		{"service user data file allowed in a file", func(r *Release) { r.Services["web"].UserData = UserDataFileMarker }, false, nil},
	})
}

func TestRuleTarget(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"all set", func(r *Release) { r.AccountID, r.Region, r.Qualifier = "123456789012", "us-gov-west-1", "blue1" }, false, nil},
		{"all defaulted", func(r *Release) {}, false, nil},
		{"account short", func(r *Release) { r.AccountID = "12345678901" }, false, []string{"account_id: must be 12 digits"}},
		{"account letters", func(r *Release) { r.AccountID = "12345678901a" }, false, []string{"account_id: must be 12 digits"}},
		{"region uppercase", func(r *Release) { r.Region = "US-EAST-1" }, false, []string{"region: must be an AWS region like us-east-1"}},
		{"region no number", func(r *Release) { r.Region = "us-east" }, false, []string{"region: must be an AWS region like us-east-1"}},
		{"region path", func(r *Release) { r.Region = "us-east-1/../x" }, false, []string{"region: must be an AWS region like us-east-1"}},
		{"qualifier too long", func(r *Release) { r.Qualifier = "abcdefghijk" }, false, []string{"qualifier: must be 1 to 10 lowercase letters and digits"}},
		{"qualifier dash", func(r *Release) { r.Qualifier = "a-b" }, false, []string{"qualifier: must be 1 to 10 lowercase letters and digits"}},
		{"a move", moveFrom(target.Target{AccountID: "123456789012", Region: "us-east-1"}), false, nil},
		{"a move from a qualified bootstrap", moveFrom(target.Target{AccountID: "123456789012", Region: "us-east-1", Qualifier: "blue1"}), false, nil},
		{"a move from nowhere", moveFrom(target.Target{}), false, []string{"move_from.account_id: must be 12 digits", "move_from.region: must be an AWS region like us-east-1"}},
		{"a move from a bad qualifier", moveFrom(target.Target{AccountID: "123456789012", Region: "us-east-1", Qualifier: "A"}), false,
			[]string{"move_from.qualifier: must be 1 to 10 lowercase letters and digits"}},
	})
}

func moveFrom(t target.Target) func(*Release) { return func(r *Release) { r.MoveFrom = &t } }

func TestRuleSubnetsAndAMI(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"release subnets", func(r *Release) {}, false, nil},
		{"every service overrides", func(r *Release) {
			r.Subnets, r.AMI = nil, ""
			r.Services["web"].Subnets, r.Services["web"].AMI = []string{"a"}, "ami-1"
		}, false, nil},
		{"no subnets anywhere", func(r *Release) { r.Subnets = nil }, false, []string{"services.web.subnets: required because the release sets no subnets"}},
		{"one service lacks subnets", func(r *Release) {
			r.Subnets = nil
			r.Services["web"].Subnets = []string{"a"}
			r.Services["api"] = &Service{InstanceType: "t2.nano", SecurityGroups: []string{"sg-1"}}
		}, false, []string{"services.api.subnets: required because the release sets no subnets"}},
		{"no ami anywhere", func(r *Release) { r.AMI = "" }, false, []string{"services.web.ami: required because the release sets no ami"}},
		{"bad ami", func(r *Release) { r.AMI = "ubuntu\n" }, false, []string{"ami: must be a name or ID of letters, digits, spaces and ._:/()#,@[]+=&;{}!$*- without leading or trailing spaces"}},
		{"bad service ami", func(r *Release) { r.Services["web"].AMI = " ubuntu" }, false, []string{"services.web.ami: must be a name or ID of letters, digits, spaces and ._:/()#,@[]+=&;{}!$*- without leading or trailing spaces"}},
	})
}

func TestRuleInstanceType(t *testing.T) {
	set := func(v string) func(*Release) { return func(r *Release) { r.Services["web"].InstanceType = v } }
	const shape = "services.web.instance_type: must be an EC2 instance type like t3.micro"
	runRuleCases(t, []ruleCase{
		{"t2.nano", set("t2.nano"), false, nil},
		{"c6gn.16xlarge", set("c6gn.16xlarge"), false, nil},
		{"u-6tb1.metal", set("u-6tb1.metal"), false, nil},
		{"m7i.metal-48xl", set("m7i.metal-48xl"), false, nil},
		{"empty", set(""), false, []string{"services.web.instance_type: required"}},
		{"no dot", set("t2nano"), false, []string{shape}},
		{"uppercase", set("T2.nano"), false, []string{shape}},
		{"space", set("t2 .nano"), false, []string{shape}},
		{"too long", set("t2." + strings.Repeat("x", 30)), false, []string{shape}},
	})
}

// TestRuleLists: at most limits.MaxListLen of each list (ferry's bound,
// within Auto Scaling's quotas of 50 Classic Load Balancers and 50 target
// groups per group: Amazon EC2 Auto Scaling User Guide, Quotas); a
// Classic Load Balancer's name as ELB takes it (Elastic Load Balancing API
// Reference 2012-06-01, CreateLoadBalancer, LoadBalancerName: "a maximum
// of 32 characters, must contain only alphanumeric characters or hyphens,
// and cannot begin or end with a hyphen").
func TestRuleLists(t *testing.T) {
	many := make([]string, 17)
	for i := range many {
		many[i] = fmt.Sprintf("s%d", i)
	}
	const refShape = "must be a name or ID of letters, digits, spaces and ._:/()#,@[]+=&;{}!$*- without leading or trailing spaces"
	runRuleCases(t, []ruleCase{
		{"seed security group with colons and slash", func(r *Release) {
			r.Services["web"].SecurityGroups = []string{"ec2::coinbase/deploy-test::development", "sg-0123456789abcdef0"}
		}, false, nil},
		{"sixteen subnets", func(r *Release) { r.Subnets = many[:16] }, false, nil},
		{"too many subnets", func(r *Release) { r.Subnets = many }, false, []string{"subnets: at most 16 entries, not 17"}},
		{"duplicate subnet", func(r *Release) { r.Subnets = []string{"a", "b", "a"} }, false, []string{`subnets[2]: duplicate "a"`}},
		{"empty subnet", func(r *Release) { r.Subnets = []string{""} }, false, []string{"subnets[0]: required"}},
		{"too many security groups", func(r *Release) { r.Services["web"].SecurityGroups = many }, false, []string{"services.web.security_groups: at most 16 entries, not 17"}},
		// Without a security group, EC2 puts the instances in the VPC's
		// default security group (Amazon EC2 User Guide: "If you don't
		// specify a security group, Amazon EC2 uses the default security
		// group for the VPC"), which the project does not control.
		{"no security group", func(r *Release) { r.Services["web"].SecurityGroups = nil }, false, []string{"services.web.security_groups: required: at least one security group (without one, instances get the VPC's default group)"}},
		{"empty security groups", func(r *Release) { r.Services["web"].SecurityGroups = []string{} }, false, []string{"services.web.security_groups: required: at least one security group (without one, instances get the VPC's default group)"}},
		{"duplicate target group", func(r *Release) { r.Services["web"].TargetGroups = []string{"tg", "tg"} }, false, []string{`services.web.target_groups[1]: duplicate "tg"`}},
		{"tab in security group", func(r *Release) { r.Services["web"].SecurityGroups = []string{"a\tb"} }, false, []string{"services.web.security_groups[0]: " + refShape}},
		{"trailing space", func(r *Release) { r.Services["web"].TargetGroups = []string{"tg "} }, false, []string{"services.web.target_groups[0]: " + refShape}},
		{"reference of 255 characters", func(r *Release) { r.Subnets = []string{strings.Repeat("s", 255)} }, false, nil},
		{"reference too long", func(r *Release) { r.Subnets = []string{strings.Repeat("s", 256)} }, false, []string{"subnets[0]: must be at most 255 characters"}},
		{"non-ASCII", func(r *Release) { r.Subnets = []string{"subnet-\u00e9"} }, false, []string{"subnets[0]: " + refShape}},
		{"elb name", func(r *Release) { r.Services["web"].ELBs = []string{"coinbase-deploy-test-web-elb"} }, false, nil},
		{"elb underscore", func(r *Release) { r.Services["web"].ELBs = []string{"a_b"} }, false, []string{"services.web.elbs[0]: must be a load balancer name of letters, digits and '-', not starting or ending with '-'"}},
		{"elb trailing dash", func(r *Release) { r.Services["web"].ELBs = []string{"ab-"} }, false, []string{"services.web.elbs[0]: must be a load balancer name of letters, digits and '-', not starting or ending with '-'"}},
		{"elb of 32 characters", func(r *Release) { r.Services["web"].ELBs = []string{strings.Repeat("e", 32)} }, false, nil},
		{"elb too long", func(r *Release) { r.Services["web"].ELBs = []string{strings.Repeat("e", 33)} }, false, []string{"services.web.elbs[0]: must be at most 32 characters"}},
		{"profile", func(r *Release) { r.Services["web"].Profile = "coinbase-deploy-test" }, false, nil},
		{"profile with slash", func(r *Release) { r.Services["web"].Profile = "a/b" }, false, []string{"services.web.profile: must be an IAM name of letters, digits and +=,.@_-"}},
		{"profile too long", func(r *Release) { r.Services["web"].Profile = strings.Repeat("p", 129) }, false, []string{"services.web.profile: must be at most 128 characters"}},
	})
}

func TestRuleTimeout(t *testing.T) {
	set := func(v int) func(*Release) { return func(r *Release) { r.Timeout = v } }
	runRuleCases(t, []ruleCase{
		{"default", set(0), false, nil},
		{"one second", set(1), false, nil},
		{"two days", set(172800), false, nil},
		{"too long", set(172801), false, []string{"timeout: must be between 1 and 172800 seconds"}},
		{"negative", set(-1), false, []string{"timeout: must be between 1 and 172800 seconds"}},
	})
}

func TestRuleBakeSeconds(t *testing.T) {
	set := func(v int) func(*Release) { return func(r *Release) { r.BakeSeconds = v } }
	runRuleCases(t, []ruleCase{
		{"none", set(0), false, nil},
		{"ten minutes", set(600), false, nil},
		{"a day", set(86400), false, nil},
		{"too long", set(86401), false, []string{"bake_seconds: must be between 0 and 86400 seconds"}},
		{"negative", set(-1), false, []string{"bake_seconds: must be between 0 and 86400 seconds"}},
	})
}

func TestRuleRemove(t *testing.T) {
	set := func(names ...string) func(*Release) { return func(r *Release) { r.Remove = names } }
	many := make([]string, 51)
	for i := range many {
		many[i] = fmt.Sprintf("svc%d", i)
	}
	runRuleCases(t, []ruleCase{
		{"none", set(), false, nil},
		{"a service", set("worker"), false, nil},
		{"two", set("worker", "cron"), false, nil},
		{"one the release deploys", set("web"), false, []string{`remove[0]: "web" is a service of this release: a release cannot deploy and remove it`}},
		{"twice", set("worker", "worker"), false, []string{`remove[1]: duplicate "worker"`}},
		{"not a service name", set("Worker"), false, []string{"remove[0]: service name must be lowercase letters, digits and '-', starting with a letter or digit"}},
		{"empty", set(""), false, []string{"remove[0]: service name required"}},
		{"fifty", set(many[:50]...), false, nil},
		{"too many", set(many...), false, []string{"remove: at most 50 services, not 51"}},
	})
}

func TestRuleDetach(t *testing.T) {
	set := func(elbs, tgs []string) func(*Release) {
		return func(r *Release) {
			r.Services["web"].ELBs, r.Services["web"].TargetGroups = []string{"a"}, []string{"tg-a"}
			r.Services["web"].Detach = &Detach{ELBs: elbs, TargetGroups: tgs}
		}
	}
	const dp = "services.web.detach"
	runRuleCases(t, []ruleCase{
		{"none", set(nil, nil), false, nil},
		{"a load balancer and a target group", set([]string{"b"}, []string{"tg-b"}), false, nil},
		{"one the service keeps", set([]string{"a"}, []string{"tg-a"}), false, []string{
			dp + `.elbs[0]: "a" is also in the service's elbs: a service cannot keep and leave it`,
			dp + `.target_groups[0]: "tg-a" is also in the service's target_groups: a service cannot keep and leave it`}},
		{"twice", set([]string{"b", "b"}, nil), false, []string{dp + `.elbs[1]: duplicate "b"`}},
		{"not a load balancer name", set([]string{"b_"}, nil), false, []string{dp + ".elbs[0]: must be a load balancer name of letters, digits and '-', not starting or ending with '-'"}},
	})
}

func TestRuleRollbackOf(t *testing.T) {
	set := func(id, of string) func(*Release) { return func(r *Release) { r.ReleaseID, r.RollbackOf = id, of } }
	runRuleCases(t, []ruleCase{
		{"none", set("r2", ""), false, nil},
		{"another release", set("r2", "r1"), false, nil},
		{"itself", set("r2", "r2"), false, []string{"rollback_of: must name another release than this one"}},
		{"not a release id", set("r2", "../r1"), false, []string{"rollback_of: must be letters, digits and '-', starting with a letter or digit"}},
	})
}

func TestRuleHealOfAndReconcile(t *testing.T) {
	heal := func(of, mode string) func(*Release) {
		return func(r *Release) { r.ReleaseID, r.HealOf, r.Reconcile = "r2", of, mode }
	}
	runRuleCases(t, []ruleCase{
		{"record by default", heal("", ""), false, nil},
		{"heal", heal("", ReconcileHeal), false, nil},
		{"record", heal("", ReconcileRecord), false, nil},
		{"another mode", heal("", "fix"), false, []string{`reconcile: must be "record" or "heal", not "fix"`}},
		{"a heal of another release", heal("r1", ""), false, nil},
		{"a heal of itself", heal("r2", ""), false, []string{"heal_of: must name another release than this one"}},
		{"a heal of no release", heal("r 1", ""), false, []string{"heal_of: must be letters, digits and '-', starting with a letter or digit"}},
	})
}

func TestRuleDestroy(t *testing.T) {
	destroy := func(edit func(*Release)) func(*Release) {
		return func(r *Release) {
			r.Destroy, r.Services, r.Subnets, r.AMI, r.UserData = true, nil, nil, "", ""
			if edit != nil {
				edit(r)
			}
		}
	}
	const why = "must be absent from a destroy, which deploys nothing and retires every group of the config"
	runRuleCases(t, []ruleCase{
		{"nothing to deploy", destroy(nil), false, nil},
		{"in another account", destroy(func(r *Release) { r.AccountID, r.Region = "222222222222", "eu-west-1" }), false, nil},
		{"a service", destroy(func(r *Release) { r.Services = map[string]*Service{"web": {InstanceType: "t3.small"}} }), false, []string{"services: " + why}},
		{"an image and subnets", destroy(func(r *Release) { r.AMI, r.Subnets = "ubuntu", []string{"a"} }), false, []string{"ami: " + why, "subnets: " + why}},
		{"removals, alarms, a bake", destroy(func(r *Release) { r.Remove, r.Alarms, r.BakeSeconds = []string{"web"}, []string{"a"}, 60 }), false,
			[]string{"alarms: " + why, "bake_seconds: " + why, "remove: " + why}},
		{"a move", destroy(moveFrom(target.Target{AccountID: "123456789012", Region: "us-east-1"})), false, []string{"move_from: " + why}},
		{"a release without services is no destroy", func(r *Release) { r.Services = nil }, false, []string{"services: at least one service is required"}},
	})
}

func TestRuleRollout(t *testing.T) {
	steps := func(ss ...Step) func(*Release) {
		return func(r *Release) {
			r.Services["web"].Autoscaling = &Autoscaling{MinSize: 2, MaxSize: 8}
			r.Services["web"].Rollout = &Rollout{Steps: ss}
		}
	}
	n := func(v int) Step { return Step{N: v} }
	pc := func(v int) Step { return Step{N: v, Percent: true} }
	const p = "services.web.rollout"
	runRuleCases(t, []ruleCase{
		{"a canary", steps(n(1), pc(25), pc(100)), false, nil},
		{"one step is all at once", steps(pc(100)), false, nil},
		{"counts then percentages", steps(n(1), n(2), pc(50), pc(100)), false, nil},
		{"no steps", steps(), false, []string{p + `.steps: required: the steps of the canary, the last "100%"`}},
		{"ten steps", func(r *Release) {
			steps(n(1), n(2), n(3), n(4), n(5), n(6), n(7), pc(50), pc(90), pc(100))(r)
			r.Timeout = 1200
		}, false, nil},
		{"one percent, then max_size instances", steps(pc(1), n(8), pc(100)), false, nil},
		{"too many steps", steps(n(1), n(2), n(3), n(4), n(5), n(6), n(7), n(8), pc(50), pc(90), pc(100)), false,
			[]string{p + ".steps: 11 steps, more than 10"}},
		{"last not the whole group", steps(n(1), pc(50)), false, []string{p + `.steps: the last step must be "100%" (the whole group), not 50%`}},
		{"zero instances", steps(n(0), pc(100)), false, []string{p + ".steps[0]: must be at least 1 instance, not 0"}},
		{"more than max_size", steps(n(9), pc(100)), false, []string{p + ".steps[0]: 9 instances, more than max_size (8)"}},
		{"zero percent", steps(pc(0), pc(100)), false, []string{p + ".steps[0]: must be between 1% and 100%, not 0%"}},
		{"over a hundred percent", steps(pc(150)), false, []string{p + `.steps: the last step must be "100%" (the whole group), not 150%`, p + ".steps[0]: must be between 1% and 100%, not 150%"}},
		{"counts fall", steps(n(2), n(1), pc(100)), false, []string{p + ".steps[1]: 1 must be more instances than the count before it (2)"}},
		{"counts repeat", steps(n(2), n(2), pc(100)), false, []string{p + ".steps[1]: 2 must be more instances than the count before it (2)"}},
		{"percentages repeat", steps(pc(50), pc(50), pc(100)), false, []string{p + ".steps[1]: 50% must be more than the percentage before it (50%)"}},
		{"step wait of an hour", func(r *Release) {
			steps(n(1), pc(100))(r)
			r.Timeout = 7200
			r.Services["web"].Rollout.StepWaitSeconds = 3600
		}, false, nil},
		{"step wait too long", func(r *Release) {
			steps(n(1), pc(100))(r)
			r.Services["web"].Rollout.StepWaitSeconds = 3601
		}, false, []string{p + ".step_wait_seconds: must be between 0 and 3600 seconds"}},
		{"steps beyond the timeout", func(r *Release) {
			steps(n(1), pc(50), pc(100))(r)
			r.Timeout = 600
			r.Services["web"].Rollout.StepWaitSeconds = 300
		}, false, []string{p + ": its 3 steps need at least 660 seconds (each but the last held for max(stable_seconds, step_wait_seconds), the last for stable_seconds), not less than the timeout (600 seconds)"}},
	})
}

func TestRuleMaxErrorRate(t *testing.T) {
	set := func(v float64, lbs ...string) func(*Release) {
		return func(r *Release) {
			r.Services["web"].MaxErrorRate = &v
			r.Services["web"].ELBs = lbs
		}
	}
	const p = "services.web.max_error_rate"
	runRuleCases(t, []ruleCase{
		{"one percent", set(0.01, "web-elb"), false, nil},
		{"none tolerated", set(0, "web-elb"), false, nil},
		{"a whole", set(1, "web-elb"), false, []string{p + ": must be a share of requests from 0 to below 1 (0.01 is 1%), not 1"}},
		{"a percentage by mistake", set(5, "web-elb"), false, []string{p + ": must be a share of requests from 0 to below 1 (0.01 is 1%), not 5"}},
		{"negative", set(-0.1, "web-elb"), false, []string{p + ": must be a share of requests from 0 to below 1 (0.01 is 1%), not -0.1"}},
		{"NaN", set(math.NaN(), "web-elb"), false, []string{p + ": must be a share of requests from 0 to below 1 (0.01 is 1%), not NaN"}},
		{"no load balancer to count", set(0.01), false, []string{p + ": needs elbs or target_groups: the rate is their 5xx over their requests"}},
	})
}

func TestRuleAutoscaling(t *testing.T) {
	set := func(a Autoscaling) func(*Release) { return func(r *Release) { r.Services["web"].Autoscaling = &a } }
	runRuleCases(t, []ruleCase{
		{"absent", func(r *Release) {}, false, nil},
		{"seed", set(Autoscaling{MinSize: 3, MaxSize: 5, Spread: 0.2, MaxTerms: 1}), false, nil},
		{"zero sizes are defaults", set(Autoscaling{}), false, nil},
		{"spread one", set(Autoscaling{Spread: 1}), false, []string{"services.web.autoscaling.spread: must be between 0 and 1"}},
		{"spread negative", set(Autoscaling{Spread: -0.1}), false, []string{"services.web.autoscaling.spread: must be between 0 and 1"}},
		{"spread NaN", set(Autoscaling{Spread: math.NaN()}), false, []string{"services.web.autoscaling.spread: must be between 0 and 1"}},
		{"spread just below one", set(Autoscaling{Spread: 0.999}), false, nil},
		{"min negative", set(Autoscaling{MinSize: -1, MaxSize: 1}), false, []string{"services.web.autoscaling.min_size: must be at least 1"}},
		{"max below min", set(Autoscaling{MinSize: 3, MaxSize: 2}), false, []string{"services.web.autoscaling.max_size: must be at least min_size (3)"}},
		{"max above the limit", set(Autoscaling{MinSize: 1, MaxSize: 1001}), false, []string{"services.web.autoscaling.max_size: must be at most 1000"}},
		{"max at the limit", set(Autoscaling{MinSize: 1000, MaxSize: 1000}), false, nil},
		{"max_terms negative", set(Autoscaling{MaxTerms: -1}), false, []string{"services.web.autoscaling.max_terms: must be between 0 and 1000"}},
		{"max_terms at the limit", set(Autoscaling{MaxTerms: 1000}), false, nil},
		{"max_terms above the limit", set(Autoscaling{MaxTerms: 1001}), false, []string{"services.web.autoscaling.max_terms: must be between 0 and 1000"}},
	})
}

// TestRulePolicies: a scaling policy's alarm as CloudWatch takes it
// (CloudWatch API Reference, PutMetricAlarm, Period: "Valid values are 10,
// 20, 30, and any multiple of 60"; for a period under an hour, Period
// times EvaluationPeriods at most 86,400 seconds). ferry is stricter: 10,
// 30 or a multiple of 60, and a day for every period. Adjustments are
// bounded by the largest group (limits.MaxInstances), at most
// limits.MaxPolicies policies (Auto Scaling's quota is 50 a group).
func TestRulePolicies(t *testing.T) {
	set := func(ps ...Policy) func(*Release) {
		return func(r *Release) { r.Services["web"].Autoscaling = &Autoscaling{MinSize: 1, MaxSize: 5, Policies: ps} }
	}
	up := Policy{Type: "cpu_scale_up", Threshold: 25, ScalingAdjustment: 2}
	down := Policy{Type: "cpu_scale_down", Threshold: 15, ScalingAdjustment: -1}
	with := func(p Policy, f func(*Policy)) Policy { f(&p); return p }
	const pp = "services.web.autoscaling.policies"
	runRuleCases(t, []ruleCase{
		{"seed", set(up, down), false, nil},
		{"unknown type", set(with(up, func(p *Policy) { p.Type = "memory" })), false, []string{pp + "[0].type: must be one of cpu_scale_up, cpu_scale_down"}},
		{"threshold above 100", set(with(up, func(p *Policy) { p.Threshold = 100.5 })), false, []string{pp + "[0].threshold: must be between 0 and 100"}},
		{"threshold negative", set(with(down, func(p *Policy) { p.Threshold = -1 })), false, []string{pp + "[0].threshold: must be between 0 and 100"}},
		{"scale up must add", set(with(up, func(p *Policy) { p.ScalingAdjustment = -1 })), false, []string{pp + "[0].scaling_adjustment: must be positive for cpu_scale_up"}},
		{"scale up zero", set(with(up, func(p *Policy) { p.ScalingAdjustment = 0 })), false, []string{pp + "[0].scaling_adjustment: must be positive for cpu_scale_up"}},
		{"scale down must remove", set(with(down, func(p *Policy) { p.ScalingAdjustment = 1 })), false, []string{pp + "[0].scaling_adjustment: must be negative for cpu_scale_down"}},
		{"adjustment too large", set(with(up, func(p *Policy) { p.ScalingAdjustment = 1001 })), false, []string{pp + "[0].scaling_adjustment: must be between -1000 and 1000"}},
		{"duplicate type", set(up, with(up, func(p *Policy) { p.Threshold = 30 })), false, []string{pp + "[1].type: duplicate policy type cpu_scale_up"}},
		{"too many", set(up, down, up, down, up), false, []string{
			pp + ": at most 4 policies, not 5", pp + "[2].type: duplicate policy type cpu_scale_up",
			pp + "[3].type: duplicate policy type cpu_scale_down", pp + "[4].type: duplicate policy type cpu_scale_up"}},
		{"thresholds crossed", set(with(up, func(p *Policy) { p.Threshold = 10 }), down), false, []string{pp + ": the cpu_scale_up threshold (10) must be above the cpu_scale_down threshold (15)"}},
		{"period 60", set(with(up, func(p *Policy) { p.Period = 60; p.EvaluationPeriods = 3 })), false, nil},
		{"period 10", set(with(up, func(p *Policy) { p.Period = 10 })), false, nil},
		{"period 45", set(with(up, func(p *Policy) { p.Period = 45 })), false, []string{pp + "[0].period: must be 10, 30 or a multiple of 60 up to 86400 seconds"}},
		{"window too long", set(with(up, func(p *Policy) { p.Period = 3600; p.EvaluationPeriods = 25 })), false, []string{pp + "[0].evaluation_periods: must be at least 1, with evaluation_periods * period at most 86400 seconds"}},
		{"cooldown negative", set(with(up, func(p *Policy) { p.Cooldown = -1 })), false, []string{pp + "[0].cooldown: must be between 0 and 86400 seconds"}},
		{"cooldown of a day", set(with(up, func(p *Policy) { p.Cooldown = 86400 })), false, nil},
		{"cooldown over a day", set(with(up, func(p *Policy) { p.Cooldown = 86401 })), false, []string{pp + "[0].cooldown: must be between 0 and 86400 seconds"}},
		{"thresholds 100 and 0", set(with(up, func(p *Policy) { p.Threshold = 100 }), with(down, func(p *Policy) { p.Threshold = 0 })), false, nil},
		{"thresholds equal", set(with(up, func(p *Policy) { p.Threshold = 15 }), down), false, []string{pp + ": the cpu_scale_up threshold (15) must be above the cpu_scale_down threshold (15)"}},
		{"adjustments of the whole fleet", set(with(up, func(p *Policy) { p.ScalingAdjustment = 1000 }), with(down, func(p *Policy) { p.ScalingAdjustment = -1000 })), false, nil},
		{"adjustment too small", set(with(down, func(p *Policy) { p.ScalingAdjustment = -1001 })), false, []string{pp + "[0].scaling_adjustment: must be between -1000 and 1000"}},
		{"scale down zero", set(with(down, func(p *Policy) { p.ScalingAdjustment = 0 })), false, []string{pp + "[0].scaling_adjustment: must be negative for cpu_scale_down"}},
		{"four policies: only the duplicates", set(up, down, up, down), false, []string{pp + "[2].type: duplicate policy type cpu_scale_up", pp + "[3].type: duplicate policy type cpu_scale_down"}},
		{"period 30", set(with(up, func(p *Policy) { p.Period = 30 })), false, nil},
		{"period 90", set(with(up, func(p *Policy) { p.Period = 90 })), false, []string{pp + "[0].period: must be 10, 30 or a multiple of 60 up to 86400 seconds"}},
		{"period of a day", set(with(up, func(p *Policy) { p.Period = 86400 })), false, nil},
		{"period over a day", set(with(up, func(p *Policy) { p.Period = 86460 })), false, []string{pp + "[0].period: must be 10, 30 or a multiple of 60 up to 86400 seconds"}},
		{"window of exactly a day", set(with(up, func(p *Policy) { p.Period = 60; p.EvaluationPeriods = 1440 })), false, nil},
		{"window a period over a day", set(with(up, func(p *Policy) { p.Period = 60; p.EvaluationPeriods = 1441 })), false, []string{pp + "[0].evaluation_periods: must be at least 1, with evaluation_periods * period at most 86400 seconds"}},
	})
}

// TestRuleLifecycle: a hook's heartbeat as Auto Scaling takes it (Auto
// Scaling API Reference, PutLifecycleHook, HeartbeatTimeout: "The range is
// from 30 to 7200 seconds"); at most limits.MaxLifecycleHooks hooks
// (ferry's bound; Auto Scaling's quota is 50 a group: Amazon EC2 Auto
// Scaling User Guide, Quotas).
func TestRuleLifecycle(t *testing.T) {
	hook := func() *LifecycleHook {
		return &LifecycleHook{Transition: "autoscaling:EC2_INSTANCE_TERMINATING", Role: "asg_lifecycle_hooks", SNS: "asg_lifecycle_hooks", HeartbeatTimeout: 300}
	}
	set := func(name string, f func(*LifecycleHook)) func(*Release) {
		return func(r *Release) {
			h := hook()
			f(h)
			r.Lifecycle = map[string]*LifecycleHook{name: h}
		}
	}
	same := func(*LifecycleHook) {}
	runRuleCases(t, []ruleCase{
		{"seed", set("termhook", same), false, nil},
		{"launching", set("launch", func(h *LifecycleHook) { h.Transition = "autoscaling:EC2_INSTANCE_LAUNCHING" }), false, nil},
		{"heartbeat defaulted", set("h", func(h *LifecycleHook) { h.HeartbeatTimeout = 0 }), false, nil},
		{"bad transition", set("h", func(h *LifecycleHook) { h.Transition = "autoscaling:EC2_INSTANCE_TERMINATED" }), false,
			[]string{"lifecycle.h.transition: must be one of autoscaling:EC2_INSTANCE_LAUNCHING, autoscaling:EC2_INSTANCE_TERMINATING"}},
		{"heartbeat of 30 seconds", set("h", func(h *LifecycleHook) { h.HeartbeatTimeout = 30 }), false, nil},
		{"heartbeat of two hours", set("h", func(h *LifecycleHook) { h.HeartbeatTimeout = 7200 }), false, nil},
		{"heartbeat too short", set("h", func(h *LifecycleHook) { h.HeartbeatTimeout = 29 }), false, []string{"lifecycle.h.heartbeat_timeout: must be between 30 and 7200 seconds"}},
		{"heartbeat too long", set("h", func(h *LifecycleHook) { h.HeartbeatTimeout = 7201 }), false, []string{"lifecycle.h.heartbeat_timeout: must be between 30 and 7200 seconds"}},
		{"role required", set("h", func(h *LifecycleHook) { h.Role = "" }), false, []string{"lifecycle.h.role: required"}},
		{"role bad", set("h", func(h *LifecycleHook) { h.Role = "a/b" }), false, []string{"lifecycle.h.role: must be an IAM role name of letters, digits and +=,.@_-"}},
		{"sns required", set("h", func(h *LifecycleHook) { h.SNS = "" }), false, []string{"lifecycle.h.sns: required"}},
		{"sns fifo", set("h", func(h *LifecycleHook) { h.SNS = "hooks.fifo" }), false, nil},
		{"sns bad", set("h", func(h *LifecycleHook) { h.SNS = "a:b" }), false, []string{"lifecycle.h.sns: must be an SNS topic name of letters, digits, '_' and '-'"}},
		{"hook name of 64 characters", set(strings.Repeat("h", 64), same), false, nil},
		{"hook name too long", set(strings.Repeat("h", 65), same), false, []string{"lifecycle." + strings.Repeat("h", 65) + ": hook name must be at most 64 characters"}},
		{"hook name bad", set("a b", same), false, []string{`lifecycle["a b"]: hook name must be letters, digits, '_' and '-', starting with a letter or digit`}},
		{"nil hook", func(r *Release) { r.Lifecycle = map[string]*LifecycleHook{"h": nil} }, false, []string{"lifecycle.h: must be an object"}},
		{"four", func(r *Release) {
			r.Lifecycle = map[string]*LifecycleHook{}
			for i := range 4 {
				r.Lifecycle[fmt.Sprint("h", i)] = hook()
			}
		}, false, nil},
		{"too many", func(r *Release) {
			r.Lifecycle = map[string]*LifecycleHook{}
			for i := range 5 {
				r.Lifecycle[fmt.Sprint("h", i)] = hook()
			}
		}, false, []string{"lifecycle: at most 4 hooks, not 5"}},
	})
}

// TestRuleTags: tags as Auto Scaling takes them (Auto Scaling API
// Reference, Tag: Key of 1 to 128 characters, Value of 0 to 256; keys
// starting with aws: are reserved for AWS's use); limits.MaxTags of the 50
// a resource may have, ferry keeping the rest for its own.
func TestRuleTags(t *testing.T) {
	set := func(k, v string) func(*Release) {
		return func(r *Release) { r.Services["web"].Tags = map[string]string{k: v} }
	}
	runRuleCases(t, []ruleCase{
		{"plain", set("Team", "storefront"), false, nil},
		{"allowed characters", set("a b+c=d.e_f:g/h@i-j", "k l+m=n.o_p:q/r@s-t"), false, nil},
		{"empty value", set("Team", ""), false, nil},
		{"reserved Name", set("Name", "x"), false, []string{"services.web.tags.Name: tag key is reserved: ferry sets Name itself"}},
		{"reserved any case", set("deploywith", "x"), false, []string{"services.web.tags.deploywith: tag key is reserved: ferry sets DeployWith itself"}},
		{"reserved ReleaseID", set("ReleaseID", "x"), false, []string{"services.web.tags.ReleaseID: tag key is reserved: ferry sets ReleaseID itself"}},
		{"aws prefix", set("aws:foo", "x"), false, []string{`services.web.tags["aws:foo"]: tag keys starting with "aws:" are reserved by AWS`}},
		{"AWS prefix", set("AWS:foo", "x"), false, []string{`services.web.tags["AWS:foo"]: tag keys starting with "aws:" are reserved by AWS`}},
		{"empty key", set("", "x"), false, []string{`services.web.tags[""]: tag key must not be empty`}},
		{"key and value at their limits", set(strings.Repeat("k", 128), strings.Repeat("v", 256)), false, nil},
		{"key too long", set(strings.Repeat("k", 129), "x"), false, []string{"services.web.tags." + strings.Repeat("k", 129) + ": tag key must be at most 128 characters"}},
		{"value too long", set("k", strings.Repeat("v", 257)), false, []string{"services.web.tags.k: tag value must be at most 256 characters"}},
		{"key control", set("a\tb", "x"), false, []string{`services.web.tags["a\tb"]: tag key must be letters, digits, spaces and + - = . _ : / @`}},
		{"value newline", set("k", "a\nb"), false, []string{"services.web.tags.k: tag value must be letters, digits, spaces and + - = . _ : / @"}},
		{"forty", func(r *Release) {
			r.Services["web"].Tags = map[string]string{}
			for i := range 40 {
				r.Services["web"].Tags[fmt.Sprint("t", i)] = "v"
			}
		}, false, nil},
		{"too many", func(r *Release) {
			r.Services["web"].Tags = map[string]string{}
			for i := range 41 {
				r.Services["web"].Tags[fmt.Sprint("t", i)] = "v"
			}
		}, false, []string{"services.web.tags: at most 40 tags, not 41"}},
	})
}

// TestRuleEBSVolumeSizes: a volume's size is one EC2 accepts for its type,
// from the smallest to the largest (EC2 API Reference,
// LaunchTemplateEbsBlockDeviceRequest, VolumeSize: "gp2 and gp3: 1 -
// 16,384 GiB; io1: 4 - 16,384 GiB; io2: 4 - 65,536 GiB; st1 and sc1: 125 -
// 16,384 GiB; standard: 1 - 1024 GiB"); one outside is refused before a
// launch template EC2 would refuse to launch from.
func TestRuleEBSVolumeSizes(t *testing.T) {
	set := func(size int, typ string) func(*Release) {
		return func(r *Release) { r.Services["web"].EBSVolumeSize, r.Services["web"].EBSVolumeType = size, typ }
	}
	var cases []ruleCase
	for _, b := range []struct {
		typ      string
		min, max int
	}{{"gp2", 1, 16384}, {"gp3", 1, 16384}, {"io1", 4, 16384}, {"io2", 4, 65536}, {"st1", 125, 16384}, {"sc1", 125, 16384}, {"standard", 1, 1024}} {
		refused := []string{fmt.Sprintf("services.web.ebs_volume_size: must be between %d and %d GiB for %s", b.min, b.max, b.typ)}
		below := refused
		if b.min == 1 { // 0 is no volume
			below = []string{"services.web.ebs_volume_size: required when ebs_volume_type or ebs_device_name is set"}
		}
		cases = append(cases,
			ruleCase{b.typ + " smallest", set(b.min, b.typ), false, nil},
			ruleCase{b.typ + " largest", set(b.max, b.typ), false, nil},
			ruleCase{b.typ + " below the smallest", set(b.min-1, b.typ), false, below},
			ruleCase{b.typ + " above the largest", set(b.max+1, b.typ), false, refused},
		)
	}
	runRuleCases(t, cases)
}

func TestRuleEBS(t *testing.T) {
	set := func(size int, typ, dev string) func(*Release) {
		return func(r *Release) {
			s := r.Services["web"]
			s.EBSVolumeSize, s.EBSVolumeType, s.EBSDeviceName = size, typ, dev
		}
	}
	runRuleCases(t, []ruleCase{
		{"none", set(0, "", ""), false, nil},
		{"seed", set(20, "gp2", "/dev/sda1"), false, nil},
		{"size only", set(20, "", ""), false, nil},
		{"xvd", set(20, "io2", "/dev/xvdb"), false, nil},
		{"every type", func(r *Release) {
			for i, typ := range EBSVolumeTypes {
				r.Services[fmt.Sprint("s", i)] = &Service{InstanceType: "t2.nano", SecurityGroups: []string{"sg-1"}, EBSVolumeSize: 125, EBSVolumeType: typ}
			}
		}, false, nil},
		{"type without size", set(0, "gp3", ""), false, []string{"services.web.ebs_volume_size: required when ebs_volume_type or ebs_device_name is set"}},
		{"device without size", set(0, "", "/dev/sdb"), false, []string{"services.web.ebs_volume_size: required when ebs_volume_type or ebs_device_name is set"}},
		{"size too large", set(16385, "", ""), false, []string{"services.web.ebs_volume_size: must be between 1 and 16384 GiB for gp3"}},
		{"size negative", set(-1, "", ""), false, []string{"services.web.ebs_volume_size: must be between 1 and 16384 GiB for gp3"}},
		{"unknown type, any size", set(-1, "gp9", ""), false, []string{"services.web.ebs_volume_type: must be one of gp2, gp3, io1, io2, st1, sc1, standard"}},
		{"unknown type", set(20, "gp9", ""), false, []string{"services.web.ebs_volume_type: must be one of gp2, gp3, io1, io2, st1, sc1, standard"}},
		{"hd device", set(20, "", "/dev/hda"), false, []string{"services.web.ebs_device_name: must be a device name like /dev/sdb, /dev/xvdb or /dev/sda1"}},
		{"device traversal", set(20, "", "/dev/../sda"), false, []string{"services.web.ebs_device_name: must be a device name like /dev/sdb, /dev/xvdb or /dev/sda1"}},
	})
}

// TestRuleUserData: user data renders within EC2's limit (Amazon EC2 User
// Guide, instance user data: "User data is limited to 16 KB, in raw form,
// before it is base64-encoded"), limits.MaxUserDataBytes.
func TestRuleUserData(t *testing.T) {
	big := strings.Repeat("x", 16384)
	runRuleCases(t, []ruleCase{
		{"all variables", func(r *Release) {
			r.Assets = map[string]*Asset{"app": {Path: "app.tar"}}
			r.UserData = "{{RELEASE_ID}} {{PROJECT_NAME}} {{CONFIG_NAME}} {{SERVICE_NAME}} {{ASSET_URL:app}} {{ASSET_SHA256:app}}"
		}, false, nil},
		{"jinja is left alone", func(r *Release) { r.UserData = "## template: jinja\n{{ v1.region }}" }, false, nil},
		{"unknown variable", func(r *Release) { r.UserData = "{{BUILD}}" }, false, []string{"user_data: unknown variable {{BUILD}}"}},
		{"unknown asset", func(r *Release) { r.UserData = "{{ASSET_URL:app}}" }, false, []string{`user_data: {{ASSET_URL:app}} names unknown asset "app"`}},
		{"asset without name", func(r *Release) { r.UserData = "{{ASSET_SHA256}}" }, false, []string{"user_data: {{ASSET_SHA256}} needs an asset name, e.g. {{ASSET_SHA256:app}}"}},
		{"argument to a plain variable", func(r *Release) { r.UserData = "{{RELEASE_ID:x}}" }, false, []string{"user_data: {{RELEASE_ID:x}} takes no argument"}},
		{"marker inside text", func(r *Release) { r.UserData = "a {{USER_DATA_FILE}}" }, false, []string{"user_data: {{USER_DATA_FILE}} must be the whole user_data, not part of it"}},
		{"service override checked", func(r *Release) { r.Services["web"].UserData = "{{NOPE}}" }, false, []string{"services.web.user_data: unknown variable {{NOPE}}"}},
		{"exactly the limit", func(r *Release) { r.UserData = big }, false, nil},
		{"over the limit", func(r *Release) { r.UserData = big + "x" }, false, []string{"user_data: rendered user data of service web is 16385 bytes, more than the EC2 limit of 16384"}},
		{"over the limit after rendering", func(r *Release) { r.UserData = big[:16384-16] + "{{RELEASE_ID}}" }, false,
			[]string{"user_data: rendered user data of service web is 16432 bytes, more than the EC2 limit of 16384"}},
		{"real release id used when uploaded", func(r *Release) { r.UserData = big[:16384-17] + "{{RELEASE_ID}}" }, true, nil},
		{"per service name length", func(r *Release) {
			r.UserData = big[:16384-5] + "{{SERVICE_NAME}}"
			r.Services["api"] = &Service{InstanceType: "t2.nano", SecurityGroups: []string{"sg-1"}}
			r.Services["worker-long"] = &Service{InstanceType: "t2.nano", SecurityGroups: []string{"sg-1"}}
		}, false, []string{"user_data: rendered user data of service worker-long is 16390 bytes, more than the EC2 limit of 16384"}},
	})
}

func TestRuleAssets(t *testing.T) {
	set := func(name string, a *Asset) func(*Release) {
		return func(r *Release) { r.Assets = map[string]*Asset{name: a} }
	}
	const nameShape = `asset name must be letters, digits, '.', '_' and '-', starting with a letter or digit, without ".."`
	runRuleCases(t, []ruleCase{
		{"file", set("app", &Asset{Path: "assets/app.tar.gz"}), false, nil},
		{"uploaded", set("app", &Asset{Path: "assets/app.tar.gz", SHA256: strings.Repeat("a", 64), Size: 1}), true, nil},
		{"uploaded without path", set("app", &Asset{SHA256: strings.Repeat("a", 64), Size: 1}), true, nil},
		{"path required in a file", set("app", &Asset{}), false, []string{"assets.app.path: required"}},
		{"absolute", set("app", &Asset{Path: "/etc/passwd"}), false, []string{"assets.app.path: must be a relative path with '/' separators"}},
		{"windows", set("app", &Asset{Path: `a\b`}), false, []string{"assets.app.path: must be a relative path with '/' separators"}},
		{"drive", set("app", &Asset{Path: "C:x"}), false, []string{"assets.app.path: must be a relative path with '/' separators"}},
		{"dot dot", set("app", &Asset{Path: "a/../../b"}), false, []string{`assets.app.path: must not contain ".."`}},
		{"not clean", set("app", &Asset{Path: "a//b"}), false, []string{"assets.app.path: must be a clean path (a/b)"}},
		{"control", set("app", &Asset{Path: "a\x01"}), false, []string{"assets.app.path: must not contain control characters"}},
		{"bad name", set("a/b", &Asset{Path: "x"}), false, []string{`assets["a/b"]: ` + nameShape}},
		{"dot dot name", set("a..b", &Asset{Path: "x"}), false, []string{`assets["a..b"]: ` + nameShape}},
		{"name of 64 characters", set(strings.Repeat("a", 64), &Asset{Path: "x"}), false, nil},
		{"path with spaces", set("app", &Asset{Path: "my build/app 1.tar"}), false, nil},
		{"path of 1024 characters", set("app", &Asset{Path: strings.Repeat("p", 1024)}), false, nil},
		{"path too long", set("app", &Asset{Path: strings.Repeat("p", 1025)}), false, []string{"assets.app.path: must be at most 1024 characters"}},
		{"name too long", set(strings.Repeat("a", 65), &Asset{Path: "x"}), false, []string{"assets." + strings.Repeat("a", 65) + ": asset name must be at most 64 characters"}},
		{"sha256 required when uploaded", func(r *Release) { r.Assets = map[string]*Asset{"app": {Path: "x", Size: 3}} }, true, []string{"assets.app.sha256: required"}},
		{"size required when uploaded", func(r *Release) { r.Assets = map[string]*Asset{"app": {Path: "x", SHA256: strings.Repeat("a", 64)}} }, true, []string{"assets.app.size: required (an asset may not be empty)"}},
		{"sha256 uppercase", func(r *Release) { r.Assets = map[string]*Asset{"app": {SHA256: strings.Repeat("A", 64), Size: 1}} }, true, []string{"assets.app.sha256: must be 64 lowercase hex digits"}},
		{"sha256 short", func(r *Release) { r.Assets = map[string]*Asset{"app": {SHA256: "abc", Size: 1}} }, true, []string{"assets.app.sha256: must be 64 lowercase hex digits"}},
		{"size of 64 MiB", func(r *Release) {
			r.Assets = map[string]*Asset{"app": {SHA256: strings.Repeat("a", 64), Size: 64 << 20}}
		}, true, nil},
		{"size too large", func(r *Release) {
			r.Assets = map[string]*Asset{"app": {SHA256: strings.Repeat("a", 64), Size: 64<<20 + 1}}
		}, true, []string{"assets.app.size: must be between 1 and 67108864 bytes"}},
		{"nil asset", set("app", nil), false, []string{"assets.app: must be an object"}},
		{"twenty", func(r *Release) {
			r.Assets = map[string]*Asset{}
			for i := range 20 {
				r.Assets[fmt.Sprint("a", i)] = &Asset{Path: "x"}
			}
		}, false, nil},
		{"too many", func(r *Release) {
			r.Assets = map[string]*Asset{}
			for i := range 21 {
				r.Assets[fmt.Sprint("a", i)] = &Asset{Path: "x"}
			}
		}, false, []string{"assets: at most 20 assets, not 21"}},
	})
}

func TestRuleServices(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"one", func(r *Release) {}, false, nil},
		{"fifty", func(r *Release) {
			for i := range 49 {
				r.Services[fmt.Sprint("s", i)] = &Service{InstanceType: "t2.nano", SecurityGroups: []string{"sg-1"}}
			}
		}, false, nil},
		{"none", func(r *Release) { r.Services = nil }, false, []string{"services: at least one service is required"}},
		{"fifty-one", func(r *Release) {
			for i := range 50 {
				r.Services[fmt.Sprint("s", i)] = &Service{InstanceType: "t2.nano", SecurityGroups: []string{"sg-1"}}
			}
		}, false, []string{"services: at most 50 services, not 51"}},
		{"nil service", func(r *Release) { r.Services["api"] = nil }, false, []string{"services.api: must be an object"}},
	})
}

func TestValidateReportsEveryProblemSorted(t *testing.T) {
	r := valid()
	r.ProjectName = "Bad"
	r.Timeout = -1
	r.Services["web"].Autoscaling = &Autoscaling{Spread: 2}
	r.Services["web"].InstanceType = ""
	assert.Equal(t, []string{
		`project_name: must be "org/name" with exactly one '/'`,
		"services.web.autoscaling.spread: must be between 0 and 1",
		"services.web.instance_type: required",
		"timeout: must be between 1 and 172800 seconds",
	}, problemsOf(t, r.Validate(false)))
}

func TestValidateNames(t *testing.T) {
	assert.NoError(t, ValidateProjectName("coinbase/deploy-test"))
	assert.EqualError(t, ValidateProjectName("a/../b"), `project name "a/../b": must be "org/name" with exactly one '/'`)
	assert.NoError(t, ValidateConfigName("development"))
	assert.EqualError(t, ValidateConfigName("Dev"), `config name "Dev": must be lowercase letters, digits and '-', starting with a letter or digit`)
	assert.NoError(t, ValidateServiceName("web"))
	assert.EqualError(t, ValidateServiceName(""), `service name "": required`)
	assert.NoError(t, ValidateReleaseID("1715000000-abc"))
	assert.EqualError(t, ValidateReleaseID("a/b"), `release id "a/b": must be letters, digits and '-', starting with a letter or digit`)
}

// TestRuleGroupName: the name of a service's ASG and launch template
// (naming.GroupName) must fit EC2's 128 characters for launch template
// names, with the release id when it is set, else with one as long as
// those the client generates.
func TestRuleGroupName(t *testing.T) {
	names := func(project, config, service, releaseID string) func(*Release) {
		return func(r *Release) {
			r.ProjectName, r.ConfigName, r.ReleaseID = project, config, releaseID
			r.Services = map[string]*Service{service: r.Services["web"]}
		}
	}
	project := strings.Repeat("p", 31) + "/" + strings.Repeat("q", 32) // 64
	config := strings.Repeat("c", 32)
	long := func(n int) string { return strings.Repeat("s", n) }
	rid := func(n int) string { return strings.Repeat("r", n) }
	tooLong := func(service string, n int, with string) string {
		return fmt.Sprintf("services.%s: the Auto Scaling group and launch template name %q would be %d characters%s, more than EC2's limit of 128 for launch template names; shorten project_name, config_name or the service name",
			service, project+"/"+config+"/"+service+"/<release_id>", n, with)
	}
	runRuleCases(t, []ruleCase{
		{"uploaded, exactly 128", names(project, config, long(1), rid(28)), true, nil},
		{"uploaded, 129", names(project, config, long(2), rid(28)), true,
			[]string{tooLong(long(2), 129, " with its release id of 28 characters")}},
		{"uploaded, every part at its maximum", names(project, config, long(32), rid(64)), true,
			[]string{tooLong(long(32), 195, " with its release id of 64 characters")}},
		{"file, fits with a generated release id", names(project, config, long(6), ""), false, nil},
		{"file, too long with a generated release id", names(project, config, long(7), ""), false,
			[]string{tooLong(long(7), 129, " with a generated release id of 23 characters")}},
		{"file, every part at its maximum", names(project, config, long(32), ""), false,
			[]string{tooLong(long(32), 154, " with a generated release id of 23 characters")}},
		{"not checked when a name is already wrong", names(project, config, long(33), rid(64)), true,
			[]string{"services." + long(33) + ": service name must be at most 32 characters"}},
	})
}

func TestRuleIdentity(t *testing.T) {
	const url = "https://sts.amazonaws.com/?Action=GetCallerIdentity&Version=2011-06-15"
	set := func(method, u string, headers map[string]string) func(*Release) {
		return func(r *Release) { r.Identity = &Identity{Method: method, URL: u, Headers: headers} }
	}
	headers := func(n int) map[string]string {
		h := map[string]string{}
		for i := range n {
			h[fmt.Sprint("X-H", i)] = "v"
		}
		return h
	}
	const headerRule = "header names and values are printable ASCII of at most 1024 characters"
	long := func(n int) string { return strings.Repeat("h", n) }
	runRuleCases(t, []ruleCase{
		{"none", func(r *Release) {}, false, nil},
		{"a signed request", set("POST", url, map[string]string{"Host": "sts.amazonaws.com", "X-Amz-Date": "20240506T070809Z"}), false, nil},
		{"method required", set("", url, nil), false, []string{"identity.method: required"}},
		{"method of 16 characters", set(long(16), url, nil), false, nil},
		{"method too long", set(long(17), url, nil), false, []string{"identity.method: must be at most 16 characters"}},
		{"url required", set("POST", "", nil), false, []string{"identity.url: required"}},
		{"url of 4096 characters", set("POST", long(4096), nil), false, nil},
		{"url too long", set("POST", long(4097), nil), false, []string{"identity.url: must be at most 4096 characters"}},
		{"eight headers", set("POST", url, headers(8)), false, nil},
		{"nine headers", set("POST", url, headers(9)), false, []string{"identity.headers: at most 8 headers, not 9"}},
		{"header name and value of 1024 characters", set("POST", url, map[string]string{long(1024): long(1024)}), false, nil},
		{"header name too long", set("POST", url, map[string]string{long(1025): "v"}), false, []string{"identity.headers." + long(1025) + ": " + headerRule}},
		{"header value too long", set("POST", url, map[string]string{"Host": long(1025)}), false, []string{"identity.headers.Host: " + headerRule}},
		{"empty header value", set("POST", url, map[string]string{"X-Empty": ""}), false, nil},
		{"header name with a newline", set("POST", url, map[string]string{"Host\nX": "v"}), false, []string{`identity.headers["Host\nX"]: ` + headerRule}},
		{"header value with a newline", set("POST", url, map[string]string{"Host": "a\r\nX-Injected: 1"}), false, []string{"identity.headers.Host: " + headerRule}},
	})
}

func TestRulePromotionOf(t *testing.T) {
	set := func(of, healOf, rollbackOf string) func(*Release) {
		return func(r *Release) { r.ReleaseID, r.PromotionOf, r.HealOf, r.RollbackOf = "r2", of, healOf, rollbackOf }
	}
	const neither = "promotion_of: a promoted release is no heal or rollback"
	runRuleCases(t, []ruleCase{
		{"a promotion from staging", set("staging", "", ""), false, nil},
		{"not a config name", set("Staging", "", ""), false, []string{"promotion_of: must be lowercase letters, digits and '-', starting with a letter or digit"}},
		{"a heal", set("staging", "r1", ""), false, []string{neither}},
		{"a rollback", set("staging", "", "r1"), false, []string{neither}},
		{"a heal and a rollback", set("staging", "r1", "r0"), false, []string{neither}},
	})
}

func TestRuleDescriptionAndVersion(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{"description of 1024 characters of two bytes", func(r *Release) { r.Description = strings.Repeat("é", 1024) }, false, nil},
		{"description too long", func(r *Release) { r.Description = strings.Repeat("é", 1025) }, false, []string{"description: must be at most 1024 characters, not 1025"}},
		{"version of 128 characters", func(r *Release) { r.Version = strings.Repeat("v", 128) }, false, nil},
		{"version too long", func(r *Release) { r.Version = strings.Repeat("v", 129) }, false,
			[]string{"version: must be 1 to 128 letters, digits, '.', '_', '+' and '-', starting with a letter or digit (a build number or a git commit)"}},
	})
}

func TestRuleStableSeconds(t *testing.T) {
	set := func(timeout, release, service int) func(*Release) {
		return func(r *Release) {
			r.Timeout, r.StableSeconds, r.Services["web"].StableSeconds = timeout, &release, &service
		}
	}
	runRuleCases(t, []ruleCase{
		{"an hour, the limit", set(7200, 3600, 3600), false, nil},
		{"over an hour", set(7200, 3601, 3601), false, []string{
			"services.web.stable_seconds: must be between 0 and 3600 seconds", "stable_seconds: must be between 0 and 3600 seconds"}},
		{"none", set(600, 0, 0), false, nil},
		{"just under the timeout", set(600, 599, 599), false, nil},
		{"as long as the timeout", set(600, 600, 60), false, []string{"stable_seconds: must be shorter than the timeout (600 seconds): the window has to fit in it"}},
	})
}

// TestRuleGroupNameAfterAWrongName: the group name's length is not
// reported while the project or the config name is itself wrong (its own
// problem says what to fix).
func TestRuleGroupNameAfterAWrongName(t *testing.T) {
	service := strings.Repeat("s", 32)
	runRuleCases(t, []ruleCase{
		{"project too long", func(r *Release) {
			r.ProjectName = "o/" + strings.Repeat("n", 63)
			r.Services = map[string]*Service{service: r.Services["web"]}
		}, false, []string{"project_name: must be at most 64 characters"}},
		{"config too long", func(r *Release) {
			r.ProjectName, r.ConfigName = strings.Repeat("o", 31)+"/"+strings.Repeat("n", 32), strings.Repeat("c", 33)
			r.Services = map[string]*Service{service: r.Services["web"]}
		}, false, []string{"config_name: must be at most 32 characters"}},
	})
}

// TestRuleUserDataAssetURL: {{ASSET_URL:name}} is measured as the deployer
// renders it (naming.S3URL of the asset in the target's asset bucket), so
// user data that validates fits EC2's 16 KiB when deployed, and no more
// is refused: with the target's own bucket when the release names its
// account, region and qualifier, else with a bucket name of S3's longest
// (Amazon S3 User Guide, general purpose bucket naming rules: "Bucket
// names must be between 3 (min) and 63 (max) characters long").
func TestRuleUserDataAssetURL(t *testing.T) {
	const project, config = "coinbase/deploy-test", "development"
	key := naming.TargetAssetKey(project, config, strings.Repeat("0", 64))
	named := naming.S3URL(naming.AssetBucketName("123456789012", "us-east-1", "blue1"), key)
	longest := naming.S3URL(strings.Repeat("b", 63), key)
	userData := func(url string, over int, account, region, qualifier string) func(*Release) {
		return func(r *Release) {
			r.AccountID, r.Region, r.Qualifier = account, region, qualifier
			r.Assets = map[string]*Asset{"app": {Path: "app.tar"}}
			r.UserData = strings.Repeat("x", 16384-len(url)+over) + "{{ASSET_URL:app}}"
		}
	}
	const over = "user_data: rendered user data of service web is 16385 bytes, more than the EC2 limit of 16384"
	runRuleCases(t, []ruleCase{
		{"named target, exactly the limit", userData(named, 0, "123456789012", "us-east-1", "blue1"), false, nil},
		{"named target, one over", userData(named, 1, "123456789012", "us-east-1", "blue1"), false, []string{over}},
		{"no target, exactly the limit for the longest bucket", userData(longest, 0, "", "", ""), false, nil},
		{"no target, one over", userData(longest, 1, "", "", ""), false, []string{over}},
		{"no qualifier, one over", userData(longest, 1, "123456789012", "us-east-1", ""), false, []string{over}},
		{"no region, one over", userData(longest, 1, "123456789012", "", "blue1"), false, []string{over}},
		{"no account, one over", userData(longest, 1, "", "us-east-1", "blue1"), false, []string{over}},
	})
}
