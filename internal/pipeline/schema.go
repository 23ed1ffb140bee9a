package pipeline

import (
	"bytes"
	"encoding/json"

	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/release"
)

// SchemaID is the $id of the pipeline file schema.
const SchemaID = "https://github.com/ferryhq/ferry/schema/pipeline.json"

type obj = map[string]any

// elbTemplatePattern is a classic load balancer name that may use
// ConfigVar; iamTemplatePattern an IAM name.
const (
	elbTemplatePattern = `^([A-Za-z0-9-]|\{\{CONFIG_NAME\}\})+$`
	iamTemplatePattern = `^([A-Za-z0-9+=,.@_-]|\{\{CONFIG_NAME\}\})+$`
)

// Schema returns the JSON Schema (draft 2020-12) of a pipeline file, for
// editors, made from the same patterns and limits as Validate. Rules
// across fields (unique config names, names required in a wave, no soak
// on the first stage, min_size <= max_size) are only in Validate. The
// result is indented JSON ending with a newline.
func Schema() []byte {
	str := func(desc, pat string, maxLen int) obj {
		return obj{"type": "string", "description": desc, "pattern": pat, "minLength": 1, "maxLength": maxLen}
	}
	object := func(desc string, props obj, required ...string) obj {
		o := obj{"type": "object", "description": desc, "properties": props, "additionalProperties": false}
		if len(required) > 0 {
			o["required"] = required
		}
		return o
	}
	list := func(desc string, item obj) obj {
		return obj{"type": []string{"array", "null"}, "description": desc, "items": item, "maxItems": limits.MaxListLen, "uniqueItems": true}
	}
	size := func(desc string) obj {
		return obj{"type": "integer", "description": desc, "minimum": 1, "maximum": limits.MaxInstances}
	}
	ref := func(desc string) obj { return str(desc, release.RefPattern, limits.MaxResourceRef) }
	refs := func(desc string) obj {
		return list(desc+" Replaces the release's; "+ConfigVar+" is the target's config name.", ref("A Name tag or id."))
	}

	service := object("One service's environment facts in the stage.", obj{
		"instance_type":   str("EC2 instance type.", release.InstanceTypePattern, 32),
		"min_size":        size("Smallest size of the service's groups."),
		"max_size":        size("Largest size of the service's groups."),
		"subnets":         refs("Subnets of the service."),
		"security_groups": refs("Security groups of the service."),
		"elbs":            list("Classic load balancers. Replaces the release's; "+ConfigVar+" is the target's config name.", str("A load balancer name.", elbTemplatePattern, limits.MaxResourceRef)),
		"target_groups":   refs("Target groups of the service."),
		"profile":         str("Instance profile; "+ConfigVar+" is the target's config name.", iamTemplatePattern, 128),
		"alarms":          refs("Alarms of the service."),
	})
	hook := object("One lifecycle hook's environment facts in the stage; "+ConfigVar+" is the target's config name.", obj{
		"role": str("The role Auto Scaling assumes to notify.", iamTemplatePattern, 64),
		"sns":  str("The notification topic.", `^([A-Za-z0-9_-]|\{\{CONFIG_NAME\}\})+(\.fifo)?$`, 256),
	})
	target := object("Where the stage deploys.", obj{
		"name":       str("Required when the stage has more than one target: target NAME of stage CONFIG deploys config CONFIG-NAME.", release.NamePattern, limits.MaxConfigLen),
		"account_id": str("AWS account id.", release.AccountIDPattern, 12),
		"region":     str("AWS region.", release.RegionPattern, 32),
		"qualifier":  str("Bootstrap qualifier of the target.", release.QualifierPattern, limits.MaxQualifierLen),
	}, "account_id", "region")
	stage := object("An environment: a config deployed to every target at once.", obj{
		"config_name": str("The stage's config.", release.NamePattern, limits.MaxConfigLen),
		"targets": obj{"type": "array", "description": "Deployed together, as a wave.", "items": target,
			"minItems": 1, "maxItems": limits.MaxWaveTargets},
		"overrides": object("The stage's environment facts that differ from the release's: nothing else may differ.", obj{
			"subnets":   refs("Subnets of every service."),
			"alarms":    refs("Alarms of the release."),
			"lifecycle": obj{"type": "object", "description": "Per lifecycle hook.", "additionalProperties": hook},
			"services":  obj{"type": "object", "description": "Per service.", "additionalProperties": service},
		}),
		"gates": object("What must hold before the stage deploys, besides the stage before it having succeeded with the same artifact.", obj{
			"soak_seconds": obj{"type": "integer", "minimum": 0, "maximum": limits.MaxSoakSeconds, "description": "Seconds to wait after the stage before succeeded (not on the first stage)."},
			"alarms":       list("CloudWatch alarms that must not be in ALARM in any target of the stage before (not on the first stage).", ref("An alarm name.")),
			"approval":     obj{"type": "boolean", "description": "A person approves the stage (ferry pipeline approve)."},
			"approvers": obj{"type": "array", "maxItems": limits.MaxApprovers, "description": "With approval: who may approve, as IAM principal ARN patterns (* and ? in the resource), e.g. arn:aws:iam::123456789012:role/ReleaseManager*; a role session matches its role's ARN.",
				"items": obj{"type": "string", "pattern": approverPattern, "maxLength": limits.MaxApproverLen}},
			"separate_approver": obj{"type": "boolean", "description": "With approval: the approver is another principal than who started the promotion."},
		}),
	}, "config_name", "targets")
	root := object("A ferry pipeline: one project's release promoted through ordered stages.", obj{
		"project_name": str(`The project, "org/name".`, release.ProjectPattern, limits.MaxProjectLen),
		"description":  obj{"type": "string", "maxLength": limits.MaxDescriptionLen, "description": "What the pipeline is, for people."},
		"stages":       obj{"type": "array", "items": stage, "minItems": 1, "maxItems": limits.MaxStages, "description": "In order."},
	}, "project_name", "stages")
	root["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	root["$id"] = SchemaID
	root["title"] = "ferry pipeline"

	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(root); err != nil {
		panic("pipeline schema: " + err.Error()) // static data: cannot happen
	}
	return buf.Bytes()
}
