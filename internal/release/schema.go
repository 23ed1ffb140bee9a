package release

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
)

// SchemaID is the $id of the release file schema.
const SchemaID = "https://github.com/ferryhq/ferry/schema/release.json"

type obj = map[string]any

// Schema returns the JSON Schema (draft 2020-12) of a release file, for
// editors. It is generated from the same patterns, enumerations and limits
// as Validate. It describes a release file, so the fields only the client
// sets are absent (additionalProperties refuses them). Rules across
// fields (e.g. max_size >= min_size, rendered user data size) are only in
// Validate. The result is indented JSON ending with a newline.
func Schema() []byte {
	s := obj{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"$id":                  SchemaID,
		"title":                "ferry release file",
		"description":          "A release: what ferry deploys for one project into one config.",
		"type":                 "object",
		"properties":           releaseSchemaProperties(),
		"required":             []string{"project_name", "config_name", "services"},
		"additionalProperties": false,
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(s); err != nil {
		panic("release schema: " + err.Error()) // static data; covered by tests
	}
	return buf.Bytes()
}

// schemaString is a non-empty string of at most maxLen matching pat.
func schemaString(desc, pat string, maxLen int) obj {
	return obj{"type": "string", "description": desc, "pattern": pat, "minLength": 1, "maxLength": maxLen}
}

// schemaInt is an integer in [lo, hi].
func schemaInt(desc string, lo, hi int) obj {
	return obj{"type": "integer", "description": desc, "minimum": lo, "maximum": hi}
}

// schemaList is a list of distinct items (or null), of at most
// limits.MaxListLen.
func schemaList(desc string, item obj) obj {
	return obj{"type": []string{"array", "null"}, "description": desc, "items": item,
		"maxItems": limits.MaxListLen, "uniqueItems": true}
}

// schemaRequiredList makes a list hold at least one item.
func schemaRequiredList(l obj) obj {
	l["type"], l["minItems"] = "array", 1
	return l
}

// schemaObject is an object of props and nothing else, with the required
// ones.
func schemaObject(desc string, props obj, required ...string) obj {
	o := obj{"type": "object", "description": desc, "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// schemaRef is a resource's Name tag or ID.
func schemaRef(desc string) obj { return schemaString(desc, refPattern, limits.MaxResourceRef) }

// schemaStable is a stable_seconds.
func schemaStable(desc string) obj { return schemaInt(desc, 0, limits.MaxStableSeconds) }

// releaseSchemaProperties are the fields of a release file.
func releaseSchemaProperties() obj {
	return obj{
		"project_name": obj{"type": "string", "pattern": projectPattern, "maxLength": limits.MaxProjectLen,
			"not": obj{"pattern": `\.\.`}, "description": "org/name"},
		"config_name":    schemaString("The environment, e.g. development.", simpleNamePattern, limits.MaxConfigLen),
		"description":    obj{"type": "string", "maxLength": limits.MaxDescriptionLen, "pattern": descriptionPattern, "description": "What the release is, for people: shown by deploy and status."},
		"version":        schemaString("The build the release deploys: a build number or a git commit; shown by deploy and status.", versionPattern, limits.MaxVersionLen),
		"account_id":     obj{"type": "string", "pattern": accountIDPattern, "description": "Target account (default: the deployer's)."},
		"region":         obj{"type": "string", "pattern": regionPattern, "maxLength": 32, "description": "Target region (default: the deployer's)."},
		"qualifier":      obj{"type": "string", "pattern": qualifierPattern, "description": "Selects a bootstrap of the target."},
		"move_from":      moveFromSchema(),
		"subnets":        schemaList("Subnet Name tags or IDs (or set subnets on every service).", schemaRef("A subnet Name tag or ID.")),
		"ami":            schemaRef("AMI Name tag or ID (or set ami on every service)."),
		"user_data":      userDataSchema(),
		"timeout":        schemaInt("Seconds to become healthy (default 600).", 1, int(limits.MaxTimeout.Seconds())),
		"bake_seconds":   schemaInt("Seconds the new groups serve alone, the previous ones standing by, before the previous release is retired; a halt, an unhealthy service, an alarm in ALARM or an error rate above max_error_rate meanwhile rolls back (default 0).", 0, limits.MaxBakeSeconds),
		"analysis":       analysisSchema(),
		"alarms":         schemaList("CloudWatch alarms of the project-config (tagged ProjectName and ConfigName) that must not be in ALARM while the release is judged; one in ALARM halts it.", schemaRef("An alarm name.")),
		"stable_seconds": schemaStable(fmt.Sprintf("Seconds each service must hold its healthy target without a break before the previous release is retired (default %d, at most half the timeout).", DefaultStableSeconds)),
		"lifecycle": obj{"type": []string{"object", "null"}, "maxProperties": limits.MaxLifecycleHooks,
			"propertyNames": obj{"pattern": hookNamePattern, "maxLength": maxHookNameLen}, "additionalProperties": hookSchema()},
		"assets": obj{"type": []string{"object", "null"}, "maxProperties": limits.MaxAssets,
			"propertyNames":        obj{"pattern": assetNamePattern, "maxLength": maxAssetNameLen, "not": obj{"pattern": `\.\.`}},
			"additionalProperties": assetSchema()},
		"services": obj{"type": "object", "minProperties": 1, "maxProperties": limits.MaxServices,
			"propertyNames": obj{"pattern": simpleNamePattern, "maxLength": limits.MaxServiceLen}, "additionalProperties": serviceSchema()},
		"remove": obj{"type": []string{"array", "null"}, "maxItems": limits.MaxServices, "uniqueItems": true,
			"description": "Services of the project-config this release removes: their serving groups are retired at the swap. A deploy that would retire a service not named here is refused.",
			"items":       schemaString("A service name.", simpleNamePattern, limits.MaxServiceLen)},
		"reconcile": obj{"type": "string", "enum": []string{"", ReconcileRecord, ReconcileHeal},
			"description": "What the deployer's reconcile pass does while this release is deployed: record (the default) records drift; heal also deploys the release's content again when a group is gone or its instances stay unhealthy."},
	}
}

// moveFromSchema is a release's move_from.
func moveFromSchema() obj {
	return schemaObject(`Moves the config from the environment it is deployed to now, named exactly as ferry plan says it, to this release's (account_id, region, qualifier): the swap retires the fleet left there, leaving its load balancers without instances. A release whose environment differs from the config's is refused without it; ignored when the config is deployed to the release's environment already.`, obj{
		"account_id": obj{"type": "string", "pattern": accountIDPattern, "description": "The account the config is deployed to now."},
		"region":     obj{"type": "string", "pattern": regionPattern, "maxLength": 32, "description": "The region the config is deployed to now."},
		"qualifier":  obj{"type": "string", "pattern": qualifierPattern, "description": "The qualifier of the bootstrap the config is deployed with now."},
	}, "account_id", "region")
}

// userDataSchema is a release's or a service's user_data.
func userDataSchema() obj {
	return obj{"type": "string", "maxLength": limits.MaxUserDataBytes, "description": "User data template (cloud-init). Variables: " +
		strings.Join(Variables(), ", ") + ". " + UserDataFileMarker + " is replaced by the contents of <release file>.userdata."}
}

// serviceSchema is one service of a release.
func serviceSchema() obj {
	return schemaObject("A service: one ASG per release.", obj{
		"instance_type":   schemaString("EC2 instance type, e.g. t3.micro (required without mixed_instances, absent with it).", instanceTypePattern, 32),
		"mixed_instances": mixedSchema(),
		"security_groups": schemaRequiredList(schemaList("Security group Name tags or IDs: at least one (without one, instances get the VPC's default group).", schemaRef("A security group Name tag or ID."))),
		"elbs":            schemaList("Classic load balancer names.", schemaString("A classic load balancer name.", elbPattern, maxELBLen)),
		"target_groups":   schemaList("Target group Name tags.", schemaRef("A target group Name tag.")),
		"profile":         schemaString("Instance profile name.", iamNamePattern, maxIAMNameLen),
		"ebs_volume_size": schemaInt("EBS volume size in GiB, as EC2 accepts for the type: gp2 and gp3 1 to 16384, io1 4 to 16384, io2 4 to 65536, st1 and sc1 125 to 16384, standard 1 to 1024.", 1, maxEBSVolumeSize),
		"ebs_volume_type": obj{"enum": EBSVolumeTypes, "description": "EBS volume type (default " + DefaultEBSVolumeType + ")."},
		"ebs_device_name": obj{"type": "string", "pattern": deviceNamePattern, "description": "Device name (default: the AMI's root device, so the size resizes the root volume)."},
		"autoscaling":     autoscalingSchema(),
		"tags":            tagsSchema(),
		"ami":             schemaRef("Overrides the release's ami."),
		"subnets":         schemaList("Overrides the release's subnets.", schemaRef("A subnet Name tag or ID.")),
		"user_data":       userDataSchema(),
		"stable_seconds":  schemaStable("Overrides the release's stable_seconds."),
		"alarms":          schemaList("More CloudWatch alarms, the service's own, that must not be in ALARM while the release is judged.", schemaRef("An alarm name.")),
		"rollout":         rolloutSchema(),
		"detach": schemaObject("Load balancers the service leaves: those its serving groups are attached to that the release no longer names. A deploy that would take the service out of one not named here is refused.", obj{
			"elbs":          schemaList("Classic load balancer names.", schemaString("A classic load balancer name.", elbPattern, maxELBLen)),
			"target_groups": schemaList("Target group Name tags.", schemaRef("A target group Name tag.")),
		}),
		"max_error_rate": obj{"type": "number", "minimum": 0, "exclusiveMaximum": 1,
			"description": "Highest share of requests (0.01 is 1%) the service's load balancers may answer with an HTTP 5xx from its instances, over the last two minutes of their own CloudWatch metrics, while the release is judged; above it halts (or rolls back during the bake)."},
	}, "security_groups")
}

// mixedSchema is a service's mixed_instances.
func mixedSchema() obj {
	rng := func(desc string) obj {
		return schemaObject(desc, obj{"min": schemaInt("Minimum.", 0, maxInteger), "max": schemaInt("Maximum (default: none).", 0, maxInteger)}, "min")
	}
	enumList := func(desc string, values []string) obj { return schemaList(desc, obj{"enum": values}) }
	typeFilter := schemaString("An instance type, family or size; * is a wildcard.", instanceTypeFilterRe.String(), maxTypeFilterLen)
	req := schemaObject("Attributes of the instance types to launch (attribute-based instance type selection).", obj{
		"vcpu":                  rng("vCPUs."),
		"memory_mib":            rng("Memory in MiB."),
		"cpu_manufacturers":     enumList("CPU manufacturers.", CPUManufacturers),
		"instance_generations":  enumList("Instance generations.", InstanceGenerations),
		"burstable_performance": obj{"enum": BurstablePerformances, "description": "Burstable (T) types: included, excluded (default), required."},
		"allowed_instance_types": obj{"type": "array", "maxItems": maxTypeFilters, "items": typeFilter,
			"description": "Only these types (not with excluded_instance_types)."},
		"excluded_instance_types": obj{"type": "array", "maxItems": maxTypeFilters, "items": typeFilter,
			"description": "Not these types (not with allowed_instance_types)."},
		"spot_max_price_percentage_over_lowest_price":      schemaInt("Spot price protection: percent over the cheapest matching type.", 0, maxInteger),
		"on_demand_max_price_percentage_over_lowest_price": schemaInt("On-Demand price protection: percent over the cheapest matching type.", 0, maxInteger),
	}, "vcpu", "memory_mib")
	override := schemaObject("An instance type with an optional weight, or a set of instance requirements.", obj{
		"instance_type":         schemaString("EC2 instance type.", instanceTypePattern, 32),
		"weight":                schemaInt("Capacity units the type counts for (every type has one, or none).", minWeight, maxWeight),
		"instance_requirements": req,
	})
	return schemaObject("Launches the group across instance types (or types chosen by attributes), On-Demand and Spot: Auto Scaling's mixed instances policy. With weights, min_size, max_size and rollout counts are capacity units.", obj{
		"overrides": obj{"type": "array", "minItems": 1, "maxItems": maxOverrideTypes, "items": override,
			"description": "Instance types (at most 40; first is highest priority) or sets of instance_requirements (at most 4), not both."},
		"on_demand_base_capacity":         schemaInt("Capacity filled by On-Demand first (default 0).", 0, maxInteger),
		"on_demand_percentage_above_base": schemaInt("Percent of the capacity above the base that is On-Demand, the rest Spot (default 100).", 0, 100),
		"spot_allocation_strategy":        obj{"enum": SpotAllocationStrategies, "description": "How Spot instances spread across pools (default price-capacity-optimized)."},
		"spot_instance_pools":             schemaInt("Pools lowest-price spreads across (default 2; only with lowest-price).", 1, maxSpotPools),
		"on_demand_allocation_strategy":   obj{"enum": OnDemandAllocationStrategies, "description": "prioritized (the overrides' order; default with instance types) or lowest-price (default and only choice with instance_requirements)."},
		"capacity_rebalance":              obj{"type": "boolean", "description": "Replace a Spot instance at elevated risk of interruption before it is interrupted: launch first, then terminate."},
	}, "overrides")
}

// autoscalingSchema is a service's autoscaling, with its CPU policies.
func autoscalingSchema() obj {
	policy := schemaObject("A CPU scaling policy with its CloudWatch alarm.", obj{
		"type":               obj{"enum": PolicyTypes, "description": "cpu_scale_up (positive scaling_adjustment) or cpu_scale_down (negative)."},
		"threshold":          obj{"type": "number", "minimum": 0, "maximum": maxThreshold, "description": "CPU utilization percent."},
		"scaling_adjustment": schemaInt("Instances to add (cpu_scale_up, > 0) or remove (cpu_scale_down, < 0).", -limits.MaxInstances, limits.MaxInstances),
		"evaluation_periods": schemaInt("Alarm evaluation periods (default 1).", 0, maxPolicyWindow/10),
		"period":             schemaInt("Alarm period in seconds: 10, 30 or a multiple of 60 (default 300).", 0, maxPolicyWindow),
		"cooldown":           schemaInt("Seconds between scaling activities (default 300).", 0, maxCooldown),
	}, "type", "threshold", "scaling_adjustment")
	return schemaObject("Horizontal scale of the service (default min_size 1, max_size 1).", obj{
		"min_size":  schemaInt("Fewest instances; 0 or absent means 1.", 0, limits.MaxInstances),
		"max_size":  schemaInt("Most instances, at least min_size; 0 or absent means min_size.", 0, limits.MaxInstances),
		"spread":    obj{"type": "number", "minimum": 0, "exclusiveMaximum": 1, "description": "Launch desired*(1+spread); healthy at desired*(1-spread)."},
		"max_terms": schemaInt("How many instances of the new group may terminate during the deploy; one more halts it (default 0).", 0, limits.MaxInstances),
		"policies":  obj{"type": []string{"array", "null"}, "items": policy, "maxItems": limits.MaxPolicies},
	})
}

// tagsSchema is a service's tags: reserved and aws: keys refused.
func tagsSchema() obj {
	return obj{
		"type": []string{"object", "null"}, "description": "Tags of the service's instances. Keys ferry sets and aws: keys are reserved.",
		"maxProperties": limits.MaxTags,
		"propertyNames": obj{"pattern": tagPattern, "minLength": 1, "maxLength": limits.MaxTagKeyLen,
			"not": obj{"anyOf": append([]any{obj{"pattern": "^[Aa][Ww][Ss]:"}}, reservedTagSchemas()...)}},
		"additionalProperties": obj{"type": "string", "pattern": tagPattern, "maxLength": limits.MaxTagValueLen},
	}
}

// rolloutSchema is a service's canary rollout.
func rolloutSchema() obj {
	return schemaObject(`A canary: the new group starts at the first step, each step holds its healthy target for step_wait_seconds (at least stable_seconds) with the release's alarms clear before the next, and the previous fleet serves alongside until the last step, "100%".`, obj{
		"steps": obj{"type": "array", "minItems": 1, "maxItems": limits.MaxRolloutSteps,
			"description": `Instances (like 1) or percentages of the group (like "25%"), rising; the last "100%".`,
			"items": obj{"oneOf": []any{
				obj{"type": "integer", "minimum": 1, "maximum": limits.MaxInstances},
				obj{"type": "string", "pattern": `^(100|[1-9][0-9]?)%$`},
			}}},
		"step_wait_seconds": schemaInt("Seconds each step but the last holds its healthy target before the next (default: stable_seconds).", 0, limits.MaxStableSeconds),
	}, "steps")
}

// hookSchema is one lifecycle hook.
func hookSchema() obj {
	return schemaObject("An Auto Scaling lifecycle hook.", obj{
		"transition":        obj{"enum": Transitions},
		"role":              schemaString("IAM role name the hook uses to publish.", iamNamePattern, maxRoleNameLen),
		"sns":               schemaString("SNS topic name.", snsTopicPattern, maxSNSTopicLen),
		"heartbeat_timeout": schemaInt("Seconds (default 300).", minHeartbeat, maxHeartbeat),
	}, "transition", "role", "sns")
}

// assetSchema is one asset.
func assetSchema() obj {
	return schemaObject("A file the instances need, published by its SHA-256.", obj{
		"path": obj{"type": "string", "minLength": 1, "maxLength": maxAssetPathLen,
			"pattern": `^[^/\\]`, "not": obj{"pattern": `(^|/)\.\.(/|$)`},
			"description": "Path relative to the release file, '/' separators, no \"..\"."},
	}, "path")
}

// reservedTagSchemas matches the reserved tag keys, case-insensitively.
func reservedTagSchemas() []any {
	var out []any
	for _, k := range reservedTagsPattern() {
		out = append(out, obj{"pattern": k})
	}
	return out
}

func reservedTagsPattern() []string {
	var out []string
	for _, k := range naming.ReservedTags() {
		var b strings.Builder
		b.WriteString("^")
		for _, c := range k {
			lo, up := strings.ToLower(string(c)), strings.ToUpper(string(c))
			if lo == up {
				b.WriteString(lo)
			} else {
				b.WriteString("[" + up + lo + "]")
			}
		}
		b.WriteString("$")
		out = append(out, b.String())
	}
	return out
}
