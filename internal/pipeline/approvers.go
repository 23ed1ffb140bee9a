package pipeline

import (
	"regexp"
	"slices"
	"strings"

	"github.com/ferryhq/ferry/internal/limits"
	"github.com/ferryhq/ferry/internal/naming"
)

// approverPattern is what an approver pattern is: the ARN of an IAM
// principal of one account (12 digits, no wildcard), a user, a role, a
// role's session or a federated user, or the account's root, with IAM's
// wildcards (* and ?) in the resource only.
const approverPattern = `^arn:aws(-cn|-us-gov)?:(iam|sts)::[0-9]{12}:(root|(user|role|assumed-role|federated-user)/[\w+=,.@/*?-]+)$`

var approverRE = regexp.MustCompile(approverPattern)

// approvers checks the approvers of gates g at gpath.
func approvers(probs *problems, gpath string, g *Gates) {
	if !g.Approval && (len(g.Approvers) > 0 || g.SeparateApprover) {
		probs.add(gpath+".approval", "required: approvers and separate_approver say who approves, so the stage needs approval: true")
	}
	if len(g.Approvers) > limits.MaxApprovers {
		probs.add(gpath+".approvers", "at most %d patterns, not %d", limits.MaxApprovers, len(g.Approvers))
	}
	for i, a := range g.Approvers {
		switch {
		case len(a) > limits.MaxApproverLen:
			probs.add(index(gpath+".approvers", i), "must be at most %d characters", limits.MaxApproverLen)
		case !approverRE.MatchString(a):
			probs.add(index(gpath+".approvers", i), "%q is not an IAM principal ARN pattern: arn:aws:iam::ACCOUNT:role/NAME, user/NAME, assumed-role/ROLE/SESSION, federated-user/NAME or root, with * and ? only after the account", a)
		}
	}
}

// MayApprove reports whether the principal arn (a verified caller's ARN,
// as GetCallerIdentity names it) may approve a stage of gates g: any
// principal when g names no approvers; else one whose ARN matches a
// pattern (naming.WildcardMatch). A role session
// (arn:aws:sts::ACCOUNT:assumed-role/ROLE/SESSION) also matches as its
// role, arn:aws:iam::ACCOUNT:role/ROLE, as aws:PrincipalArn names it (a
// session's ARN does not carry the role's path: a pattern for a role
// with a path names it with a wildcard, role/*ROLE).
func (g *Gates) MayApprove(arn string) bool {
	if g == nil || len(g.Approvers) == 0 {
		return true
	}
	names := []string{arn}
	if role := sessionRole(arn); role != "" {
		names = append(names, role)
	}
	return slices.ContainsFunc(g.Approvers, func(p string) bool {
		return slices.ContainsFunc(names, func(n string) bool { return naming.WildcardMatch(p, n) })
	})
}

// ApproverAccounts are the accounts g's approvers name, each once.
func (g *Gates) ApproverAccounts() []string {
	var out []string
	for _, p := range g.approvers() {
		if parts := strings.SplitN(p, ":", 6); len(parts) == 6 && !slices.Contains(out, parts[4]) {
			out = append(out, parts[4])
		}
	}
	return out
}

func (g *Gates) approvers() []string {
	if g == nil {
		return nil
	}
	return g.Approvers
}

// sessionRole is the ARN of the role of a role session's ARN, "" when arn
// is not one.
func sessionRole(arn string) string {
	parts := strings.SplitN(arn, ":", 6)
	if len(parts) != 6 || parts[2] != "sts" {
		return ""
	}
	rest, ok := strings.CutPrefix(parts[5], "assumed-role/")
	role, _, hasSession := strings.Cut(rest, "/")
	if !ok || !hasSession || role == "" {
		return ""
	}
	return "arn:" + parts[1] + ":iam::" + parts[4] + ":role/" + role
}
