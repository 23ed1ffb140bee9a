package naming

// PassRoleResource is the resource, after "arn:<partition>:iam::<account>:",
// of the roles the deploy role may pass to EC2 and Auto Scaling (instance
// profile roles and lifecycle hook roles): a role under a path, never one
// at the root path. The bootstrap template's iam:PassRole statement and
// the simulation's check of it are both made from it.
const PassRoleResource = "role/*/*"

// Passable reports whether the deploy role may pass the role with this
// path and name: whether "role"+path+name matches PassRoleResource with
// IAM's wildcards.
func Passable(path, name string) bool { return WildcardMatch(PassRoleResource, "role"+path+name) }

// HookRoleTrust is the service principal a lifecycle hook's role must
// trust: Auto Scaling assumes it to publish the hook's notifications.
const HookRoleTrust = "autoscaling.amazonaws.com"

// WildcardMatch reports whether s matches pattern with IAM's wildcards in
// resource ARNs and condition values: * matches any run of characters
// (slashes included), ? any one character; everything else matches
// itself, case-sensitively.
func WildcardMatch(pattern, s string) bool {
	// Iterative glob matching with one backtrack point: linear in
	// practice, never exponential.
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && (pattern[p] == '?' || pattern[p] == s[i]):
			p++
			i++
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
