// Package fleet owns the Auto Scaling groups, launch templates and
// CloudWatch alarms ferry makes for a project-config: finding them,
// making them, readying them for the swap, and removing them. Every AWS
// call on them is made here.
//
// Finding: Groups and Templates list what the project-config's tags mark
// as ferry's (every listing re-checks the tags, whatever filter AWS
// applied); Describe finds groups by name; List and DescribeSummaries do
// the same without the groups' instances (IncludeInstances false), each
// group a Summary, a type with no instances to count, for callers that
// only name or record groups; Heads and DescribeHeads do too, each group
// as AWS describes it (for a Retirer's Headless step, and a deploy's
// resolution: capacities, processes and attachments; a group so
// described shows no instance, whether it has any or not); Alarms finds the alarms ferry
// named after groups (naming.AlarmName). Of, Others and Previous tell a
// release's own groups and templates from those of the releases before
// it; ReadActivities reads what a group's scaling activities say (its
// terminations, those Capacity Rebalancing made after launching their
// replacement, a launch that will fail again, when the newest began);
// ActivitySince, in one record, whether any began since. A group or template
// created moments ago may be missing from every one of them: AWS is
// eventually consistent after a create.
//
// Making: a Release creates a service's launch template (a client token
// of its name and the release's hash, so a retry gets the template it
// made) and its group, pinned to version 1 of that template, directly or
// through its mixed instances policy (Mixed: instance types with weights
// or instance requirements, On-Demand and Spot, Capacity Rebalancing;
// Weight is what an instance counts toward the group's capacity), its
// lifecycle hooks, tags, load balancers and target groups given in the
// one CreateAutoScalingGroup call; suspends the group's DeployProcesses
// until the swap (DeploySuspended: a group described with them suspended
// costs no call); puts its scaling policies
// and their alarms; and, at the swap, settles it (scaled from ferry's
// launch count to desired, its processes resumed). What the release made
// already is found by name and tags and left as it is; a name taken by
// anyone else is a *failure.DeployError. A call naming what the release
// made moments ago that Auto Scaling answers "not found" of that name
// (cloud.IsAutoScalingNotFound) is retryable until the last attempt; any
// other ValidationError is AWS refusing the request (a mixed instances
// policy no instance type meets, a size out of bounds), which fails at
// once, naming the group and AWS's message.
//
// Retiring: a Retirer takes a group out of service gracefully, a step per
// call, never waiting: it detaches the group from its classic load
// balancers and target groups and reports it draining while AWS shows
// them Removing; then it suspends RetireProcesses, lets Terminate run and
// scales it to zero, so each instance's termination lifecycle hooks run;
// it reports the group ready for deletion only once it is empty. An
// account's Auto Scaling calls share one request bucket, so a step asks
// for a group's attachments only where they can tell it something: a
// group whose description names classic load balancers or target groups
// is detached from those without asking; a group a previous step left
// draining is asked only for the kind of attachment draining it
// (Retirer.Draining); a group it saw detached (Retirer.Detached) is not
// asked again while its description names none; and once a group asked
// still drains, the groups after it are not asked in that step (groups
// detached together drain together: they are reported draining, as the
// previous step left them). StepDescribed takes the
// groups as its caller described them moments before. A step that bucket throttles
// part-way keeps what it did (Retirement.Stopped, Stepped) and the next
// starts at the group it stopped at (Retirer.From), so a retirement of
// more groups than one step's calls get through still reaches them all;
// a step bound to a number of calls (Retirer.Calls, its caller's share of
// the bucket) stops before a group's step could take it over, and the
// next starts there (Retirement.Next) likewise.
// The caller (the state machine, through the deployer) waits between steps;
// Standing says what keeps a group standing (draining, in service, hooks
// pending, Standby, protected), for a caller whose time bound ran out: a
// bound never turns into a forced delete. For a bake, a Retirer also
// stands a group by (StandBy: out of its load balancers, drained, with
// StandbyProcesses suspended so it stays at its capacity) and puts it
// back (Restore: its recorded capacity set back when someone lowered it,
// attached again to the load balancers and target groups it names, its
// processes resumed); the caller waits until its instances pass their
// health checks. A swap whose new groups fall below target before the old
// ones are scaled in puts them back the same way.
//
// Removing: a Remover deletes named groups with their alarms and launch
// templates (naming.GroupName names both), in that order, so a retry after
// a partial failure finds what is left by name. It deletes with
// ForceDelete, so it refuses, whatever the time, a group attached to a
// load balancer or target group, or with instances InService or in
// Terminating:Wait: that is a *failure.CleanUpError naming why (such a
// group must be retired first), and nothing of its name is removed. A
// visible group must carry its owner's tags. "Not found" means gone,
// except for the names Created lists (made moments ago by this release,
// perhaps not visible yet): those are deleted by name all the same (IAM
// lets the deploy role delete only ferry's), and "not found" is
// retryable until the last attempt, so a clean-up never reports a fleet
// gone that still runs; any other name its describes do not show is gone
// and costs no delete call (a removal taken again after a throttled one
// would otherwise spend the account's shared Auto Scaling bucket on
// every group it deleted already). The alarms of every group removed go
// in one DeleteAlarms call per 100. Whether a failed
// delete was "not found" or "already being deleted" is asked of the
// world (a describe by name), never read from an error's text.
//
// Leftovers names, for a record of what may be left, everything a
// removal of named groups would remove.
//
// Every error is a failure.Named error: transient AWS failures are
// *failure.RetryableError; what could not be made is a
// *failure.DeployError; what could not be settled or removed is a
// *failure.CleanUpError naming each leftover (a removal's wrapped in a
// RetryableError when every failure was transient).
package fleet
