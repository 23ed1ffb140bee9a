// Package pipeline owns pipelines: one project's release promoted through
// ordered stages (design document 002's environments), each a config
// deployed to one or more targets together, as a wave.
//
// It decodes a pipeline file strictly (the release decoder's rules),
// validates it (every problem at once, each "path: message"), describes
// it as a JSON Schema, and derives what each target of each stage deploys
// from one release: the artifact, what must not vary between stages
// (services, AMI, user data, assets by hash, and everything else that is
// not an environment fact), plus the stage's environment facts (the
// target, the config name, capacity, instance types, and the names of
// subnets, security groups, load balancers, instance profiles, lifecycle
// hooks' roles and topics and alarms, which may use {{CONFIG_NAME}}). Digest names an artifact: every stage of a promotion
// deploys releases with the same digest, so parity holds by
// construction, and a stage's override can change nothing else (the
// decoder refuses any other field).
//
// A promotion's documents are here too: the Request `ferry pipeline
// start` stores and starts (the pipeline, the release and the promotion
// id, bound together by one identity proof; DecodeRequest checks it as the
// deployer does), an Approval (a promotion, a stage and an artifact, with
// the approver's proof), and the hashes that name a pipeline and a
// request. An approval is authorization only as a stage's gates say:
// Gates.MayApprove matches the verified approver against the stage's
// approvers (IAM principal ARN patterns, validated with the path of a bad
// one), and separate_approver keeps the promotion's starter from
// approving it; the deployer checks both when it counts an approval.
//
// Functions here do no I/O.
package pipeline
