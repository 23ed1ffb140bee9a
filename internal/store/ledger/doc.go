// Package ledger owns the records of releases in the deployer bucket: the
// release exactly as the client uploaded it, the user data rendered for each
// service, how each execution ended (the outcome, with the release's last
// canary analysis), the last canary analysis of a release while it is
// judged (the analysis record), and what is deployed now
// (the current record: the release, the deployer version that deployed it,
// its environment and each service's group, image and desired count;
// removed by a destroy), every target environment the project-config has
// deployed to and may still have groups in (the targets record), what
// the last drift query saw (the drift record)
// and the reconciler's heals (the heal record), and each promotion (its
// record: who started it, each stage's status, approver and targets'
// outcomes; a promotion's client objects, its request, approvals and a
// registered pipeline, are read through GetClientObject). It also lists the
// project-configs the deployer keeps records of, the configs of a
// project and the releases of a project-config, and finds the configs
// holding a release id, and the promotions of a pipeline.
//
// Every key comes from package naming, whose doc says who writes each
// object, when and how.
//
// A release object is written once (If-None-Match: *) and never replaced
// by ferry; but release.json sits in the client's prefix, which more than
// the deployer may write, so Validate records the release's canonical hash
// under _state/, once (RecordReleaseHash), and every reader that acts on
// or shows a release's content reads it through VerifiedRelease (or
// CheckReleaseHash), which refuses one whose content is not what Validate
// accepted, naming the release and both hashes.
// User data, outcomes, analyses, the current, targets, drift, heal and promotion records are
// overwritten by the execution that owns them, so writing them again is
// safe.
package ledger
