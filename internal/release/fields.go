package release

import (
	"fmt"

	"github.com/ferryhq/ferry/internal/limits"
)

// Checks of single values, shared by Validate and the other documents
// people write for ferry (pipeline files). Each returns "" when s is
// valid, else why it is not, in the words Validate uses.

// CheckProjectName checks a project name: "org/name".
func CheckProjectName(s string) string { return checkProject(s) }

// CheckConfigName checks a config name.
func CheckConfigName(s string) string { return checkSimple(s, limits.MaxConfigLen) }

// CheckAccountID checks an AWS account id: 12 digits.
func CheckAccountID(s string) string {
	if !accountIDRe.MatchString(s) {
		return "must be 12 digits"
	}
	return ""
}

// CheckRegion checks an AWS region name.
func CheckRegion(s string) string {
	if len(s) > 32 || !regionRe.MatchString(s) {
		return "must be an AWS region like us-east-1"
	}
	return ""
}

// CheckQualifier checks a bootstrap qualifier.
func CheckQualifier(s string) string {
	if !qualifierRe.MatchString(s) {
		return fmt.Sprintf("must be 1 to %d lowercase letters and digits", limits.MaxQualifierLen)
	}
	return ""
}

// CheckInstanceType checks an EC2 instance type.
func CheckInstanceType(s string) string {
	switch {
	case s == "":
		return "required"
	case len(s) > 32 || !instanceTypeRe.MatchString(s):
		return "must be an EC2 instance type like t3.micro"
	}
	return ""
}

// CheckRef checks a Name tag or resource id: a subnet, AMI, security
// group, target group or alarm.
func CheckRef(s string) string { return checkRef(s) }

// CheckELB checks a classic load balancer name.
func CheckELB(s string) string { return checkELB(s) }

// CheckServiceName checks a service name.
func CheckServiceName(s string) string { return checkSimple(s, limits.MaxServiceLen) }

// Patterns of single values, for the JSON Schemas of ferry's other
// documents (pipeline files): the Check functions above match the same.
const (
	ProjectPattern      = projectPattern
	NamePattern         = simpleNamePattern
	AccountIDPattern    = accountIDPattern
	RegionPattern       = regionPattern
	QualifierPattern    = qualifierPattern
	InstanceTypePattern = instanceTypePattern
	RefPattern          = refPattern
)

// CheckIAMName checks an IAM name: an instance profile's.
func CheckIAMName(s string) string { return checkIAMName(s) }

// CheckRoleName checks an IAM role name: a lifecycle hook's.
func CheckRoleName(s string) string { return checkRoleName(s) }

// CheckSNSTopic checks an SNS topic name: a lifecycle hook's.
func CheckSNSTopic(s string) string { return checkSNSTopic(s) }
