// Package fleet owns the Auto Scaling groups, launch templates and
// CloudWatch alarms ferry makes for a project-config: finding them, and
// removing them.
//
// Finding: Groups and Templates list what the project-config's tags mark
// as ferry's (every listing re-checks the tags, whatever filter AWS
// applied); Describe finds groups by name; Alarms finds the alarms ferry
// named after groups (naming.AlarmName). A group or template created moments
// ago may be missing from every one of them: AWS is eventually consistent
// after a create.
//
// Removing: a Remover deletes named groups with their alarms and launch
// templates (naming.GroupName names both), in that order, so a retry after
// a partial failure finds what is left by name. It removes by name
// whatever the listings show: a visible group must carry its owner's
// tags; an invisible one is deleted by name all the same (IAM lets the
// deploy role delete only ferry's). "Not found" means gone, except for the
// names Created lists (made moments ago by this release, perhaps not
// visible yet): for those it is retryable until the last attempt, so a
// clean-up never reports a fleet gone that still runs. Whether a failed
// delete was "not found" or "already being deleted" is asked of the
// world (a describe by name), never read from an error's text.
//
// Leftovers names, for a record of what may be left, everything a
// removal of named groups would remove.
//
// Every error is a failure.Named error: transient AWS failures are
// *failure.RetryableError; what could not be removed is a
// *failure.CleanUpError naming each leftover (wrapped in a RetryableError
// when every failure was transient).
package fleet
