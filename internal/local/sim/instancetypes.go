package sim

import (
	"context"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
)

// instanceTypeRE is an instance type's form: family (letters, a
// generation digit, attribute letters, maybe "-flex") and one of EC2's
// sizes.
var instanceTypeRE = regexp.MustCompile(`^([a-z]+)([1-8])([a-z-]*)\.(nano|micro|small|medium|large|xlarge|[0-9]+xlarge|metal(-[0-9]+xl)?)$`)

// instanceTypeArch returns the architectures an instance type supports,
// nil for a name that is not an instance type. The simulation knows the
// rule EC2's names follow rather than the whole catalogue (generations 1
// to 8, the sizes EC2 has): Graviton
// families (a1, and a "g" among the attribute letters after the
// generation, as in t4g, m7g, c7gn, r8g) run arm64; the first-generation
// families and t2 also run i386; the rest x86_64. An Apple mac family is
// x86_64 or arm64 by generation (mac1 Intel, later Apple silicon).
func instanceTypeArch(name string) []string {
	m := instanceTypeRE.FindStringSubmatch(name)
	if m == nil {
		return nil
	}
	family, gen, attrs := m[1], m[2], m[3]
	switch {
	case family == "a" && gen == "1":
		return []string{"arm64"}
	case family == "mac":
		if gen == "1" {
			return []string{"x86_64_mac"}
		}
		return []string{"arm64_mac"}
	case strings.Contains(strings.TrimSuffix(attrs, "-flex"), "g"):
		return []string{"arm64"}
	case gen == "1" || (family == "t" && gen == "2"):
		return []string{"i386", "x86_64"}
	}
	return []string{"x86_64"}
}

// DescribeInstanceTypes describes instance types by name: their supported
// architectures (see instanceTypeArch). A name that is not an instance
// type is InvalidInstanceType, as EC2 answers for the whole call.
func (c *EC2) DescribeInstanceTypes(ctx context.Context, in *ec2.DescribeInstanceTypesInput, _ ...func(*ec2.Options)) (*ec2.DescribeInstanceTypesOutput, error) {
	const op = "DescribeInstanceTypes"
	_, err := c.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	var bad []string
	out := &ec2.DescribeInstanceTypesOutput{InstanceTypes: []ec2types.InstanceTypeInfo{}}
	for _, t := range in.InstanceTypes {
		arch := instanceTypeArch(string(t))
		if arch == nil {
			bad = append(bad, string(t))
			continue
		}
		info := ec2types.InstanceTypeInfo{InstanceType: t, ProcessorInfo: &ec2types.ProcessorInfo{}, CurrentGeneration: aws.Bool(true)}
		for _, a := range arch {
			info.ProcessorInfo.SupportedArchitectures = append(info.ProcessorInfo.SupportedArchitectures, ec2types.ArchitectureType(a))
		}
		out.InstanceTypes = append(out.InstanceTypes, info)
	}
	if len(bad) > 0 {
		return nil, c.end(op, apiErrf("InvalidInstanceType", "The following supplied instance types do not exist: [%s]", strings.Join(bad, ", ")))
	}
	return out, c.end(op, nil)
}
