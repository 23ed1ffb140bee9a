// Package naming is the one place of truth for the names ferry gives things:
// the S3 key layout of the deployer bucket, the tags ferry reads and writes,
// the conventional names of the roles and buckets the bootstrap template
// creates in each target environment, the names of the resources a
// release creates, and the names of the executions that deploy releases.
//
// Nothing else in ferry builds a key, a tag name, a role name or a bucket
// name by hand. The layout comment in naming.go lists every key; a test
// fails when a key function is missing from it.
//
// # The deployer bucket
//
// ferry has no database. What it must remember between states and between
// executions is either in the Step Functions execution (its input and the
// state document passed from state to state) or in one S3 bucket, the
// deployer's (ferry-deployer-<account>-<region>).
//
// A project name is org/name, so every key a client writes for a
// project-config sits under <org>/<name>/<config>/, and an IAM policy on
// that prefix decides who can deploy or halt that project-config. What only
// the deployer writes (the lock, the run-once markers, the records of a
// deploy and what is deployed now) sits under _state/, which no project's
// prefix can reach (a project starts with a lowercase letter or digit) and
// which the deployer bucket's policy closes to everyone but the deployer's
// role (the operators of UnlockPrincipals may delete locks).
//
// Who writes each object, when, and how:
//
//	release.json         the client, before it starts the execution; once
//	                     (If-None-Match: *): the same bytes again are fine,
//	                     other bytes under the same release id are refused
//	lock                 the Lock state, at the start of a deploy; once
//	_state/_starts/<account>/<region>/<stamp>-<execution> (a start marker)
//	                     the ValidateResources state, in its first round,
//	                     before its first call to AWS; overwritten (empty).
//	                     The deploys to one account and region starting
//	                     at once list them to take turns; a lifecycle rule
//	                     expires them
//	_state/_turns/<account>/<region>/<stamp>-20-<execution> (a turn)
//	                     the Deploy and CleanUpSuccess states, before a
//	                     round or step that calls Auto Scaling; once a key
//	                     (empty), deleted when given up. The deploys and
//	                     retirements in one account and region list them
//	                     to take turns; a lifecycle rule expires them
//	started              the Validate state, when an execution first sees
//	                     the release; once
//	release.sha256       the Validate state, once the copy in the bucket
//	                     is the execution's input; once (If-None-Match: *):
//	                     the release's canonical hash, which heals,
//	                     rollbacks, promotions and ferry show check
//	                     release.json against (release.json is the
//	                     client's prefix: only this record says what ran)
//	userdata/<service>   the Publish state, after publishing the assets;
//	                     overwritten (rendering is deterministic). A record
//	                     only: Deploy renders what it launches from the
//	                     verified release
//	outcome.json         the last state, success or failure (Lock, when
//	                     it finds the lock held by another release);
//	                     overwritten
//	analysis.json        CheckHealthy and Bake, at each judgement of a
//	                     release's canary analysis; overwritten: the
//	                     last, which the outcome keeps
//	deploying            the Deploy state, before it creates the first
//	                     group; overwritten: names the groups Deploy may
//	                     create, and CleanUpFailure adds when it began
//	                     retiring them (its time bound) and those it
//	                     removed, so a retry knows them gone rather than
//	                     not visible yet
//	standby              the Bake state, before it takes the first
//	                     previous group out of its load balancers; once:
//	                     names each with its load balancers, target groups
//	                     and the processes Bake suspends; a rollback adds
//	                     when it started and when it was done
//	deleting             the CleanUpSuccess state, before it deletes the
//	                     first previous group; once: names each with how
//	                     it served (load balancers, target groups,
//	                     capacity) to put it back; from then on the
//	                     release is past its point of no return
//	current              the last state, only on success; overwritten;
//	                     removed by the last state of a destroy
//	drift                the Drift task, at each drift query, and each
//	                     reconcile pass; overwritten: every difference with
//	                     when it was first seen
//	targets              the Publish and Deploy states, before they make
//	                     anything in an environment the record does not
//	                     name yet; overwritten: every environment the
//	                     config has deployed to; the swap leaves only the
//	                     release's once it retired the fleet of the others
//	heal                 a reconcile pass, before it starts a heal;
//	                     overwritten: the release healed, the heals in a
//	                     row, the last one's time
//	halt                 ferry halt, whenever someone halts; overwritten
//	assets/<sha256>      the client, before it uploads the release; only if
//	                     absent, and the write carries the SHA-256; the
//	                     StartTarget state copies a promotion's from the
//	                     first stage's config
//	_pipeline.json       ferry pipeline register, by whoever may deploy the
//	                     config: the one pipeline that may promote into it;
//	                     overwritten
//	_promotions/<id>/request.json  ferry pipeline start, under the first
//	                     stage's config, before it starts the promotion;
//	                     once
//	_promotions/<id>/halt  ferry pipeline halt, under any stage's config
//	_promotions/<id>.json  (under _state/) the Promote state, once; then
//	                     Gate, RequestApproval and EndStage, overwritten:
//	                     the promotion's record
//	_promotions/turns/<id>.json  (under _state/) Promote, once: the claim
//	                     of the turn after promotion <id>, so one
//	                     promotion of a pipeline runs at a time
//	_promotions/approvals/<id>/<stage>/<sha256>.json  (under _state/)
//	                     VerifyApproval, once: the deployer verified the
//	                     approval of that sum when it was given, and who
//	                     gave it
//
// A project's approvals are under <project>/_promotions/<stage>/ (in a
// config's place, but no config name begins with "_"):
//
//	<id>/approval.json   ferry pipeline approve: who approved promotion
//	                     <id> into the stage, with its identity proof
//
// A target environment's asset bucket holds published assets under
// assets/<project>/<config>/:
//
//	<sha256>             the Publish state, for each asset of a release
//	                     not there yet; once (If-None-Match: *), with its
//	                     SHA-256 checksum (x-amz-checksum-sha256, which S3
//	                     verifies); deleted by CleanUpSuccess once no recent
//	                     release of the project-config names it, while its
//	                     release holds the lock, so no Publish of that
//	                     project-config runs meanwhile
//
// Publish counts an object already there as the asset only when S3's own
// record says so (HeadObject with checksum mode: the size and the SHA-256
// S3 verified), never by metadata anyone can set. Keys assets/<sha256>
// are the layout before project-config prefixes: nothing writes or
// deletes them any more.
//
// Functions here are pure: they do no I/O and never fail. Their inputs are
// validated elsewhere (package release), so they never see "..", empty
// segments or control characters.
package naming
