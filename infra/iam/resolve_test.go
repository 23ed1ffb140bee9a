package iam

import (
	"fmt"
	"sort"
	"strings"
)

type obj = map[string]any

// stack is a synthesized template as CloudFormation would deploy it in one
// account and region with given parameter values: resolve evaluates its
// intrinsic functions (Ref, Fn::GetAtt, Fn::Join, Fn::Split, Fn::If,
// Fn::Select and the condition functions) the way CloudFormation does, for
// the resources ferry's templates hold.
type stack struct {
	account, region string
	params          map[string]any // string, or []string for a CommaDelimitedList
	tmpl            obj
	conditions      map[string]bool
}

// noValue is AWS::NoValue: removed from the list or object holding it.
type noValueT struct{}

var noValue = noValueT{}

func newStack(tmpl obj, account, region string, params map[string]any) (*stack, error) {
	s := &stack{account: account, region: region, params: map[string]any{}, tmpl: tmpl, conditions: map[string]bool{}}
	for name, p := range asObj(tmpl["Parameters"]) {
		v, ok := params[name]
		if !ok {
			v = asObj(p)["Default"]
		}
		if asObj(p)["Type"] == "CommaDelimitedList" {
			if str, isStr := v.(string); isStr {
				v = strings.Split(str, ",")
			}
		}
		s.params[name] = v
	}
	for name, c := range asObj(tmpl["Conditions"]) {
		v, err := s.condition(c)
		if err != nil {
			return nil, fmt.Errorf("condition %s: %w", name, err)
		}
		s.conditions[name] = v
	}
	return s, nil
}

func asObj(v any) obj {
	o, _ := v.(obj)
	return o
}

func (s *stack) condition(v any) (bool, error) {
	o := asObj(v)
	for fn, arg := range o {
		args, _ := arg.([]any)
		switch fn {
		case "Fn::Equals":
			a, err := s.resolve(args[0])
			if err != nil {
				return false, err
			}
			b, err := s.resolve(args[1])
			if err != nil {
				return false, err
			}
			return fmt.Sprint(a) == fmt.Sprint(b), nil
		case "Fn::Not":
			c, err := s.condition(args[0])
			return !c, err
		case "Fn::And", "Fn::Or":
			all := fn == "Fn::And"
			for _, a := range args {
				c, err := s.condition(a)
				if err != nil {
					return false, err
				}
				if c != all {
					return c, nil
				}
			}
			return all, nil
		case "Condition":
			return s.conditions[arg.(string)], nil
		}
	}
	return false, fmt.Errorf("not a condition: %v", v)
}

// physical is a resource's Ref value and its Arn attribute.
func (s *stack) physical(id string) (ref, arn string, err error) {
	r := asObj(asObj(s.tmpl["Resources"])[id])
	if r == nil {
		return "", "", fmt.Errorf("no resource %s", id)
	}
	props := asObj(r["Properties"])
	name := func(key string) (string, error) {
		v, err := s.resolve(props[key])
		if err != nil {
			return "", err
		}
		n, ok := v.(string)
		if !ok || n == "" {
			return "", fmt.Errorf("%s has no %s", id, key)
		}
		return n, nil
	}
	switch r["Type"] {
	case "AWS::IAM::Role":
		n, err := name("RoleName")
		return n, "arn:aws:iam::" + s.account + ":role/" + n, err
	case "AWS::S3::Bucket":
		n, err := name("BucketName")
		return n, "arn:aws:s3:::" + n, err
	case "AWS::Lambda::Function":
		n, err := name("FunctionName")
		return n, "arn:aws:lambda:" + s.region + ":" + s.account + ":function:" + n, err
	case "AWS::StepFunctions::StateMachine":
		n, err := name("StateMachineName")
		a := "arn:aws:states:" + s.region + ":" + s.account + ":stateMachine:" + n
		return a, a, err
	}
	return "", "", fmt.Errorf("cannot name %s (%v)", id, r["Type"])
}

// resolve evaluates v's intrinsic functions.
func (s *stack) resolve(v any) (any, error) {
	switch x := v.(type) {
	case []any:
		var out []any
		for _, e := range x {
			r, err := s.resolve(e)
			if err != nil {
				return nil, err
			}
			if r != noValue {
				out = append(out, r)
			}
		}
		return out, nil
	case obj:
		if len(x) == 1 {
			for fn, arg := range x {
				if fn == "Ref" || strings.HasPrefix(fn, "Fn::") {
					return s.intrinsic(fn, arg)
				}
			}
		}
		out := obj{}
		for k, e := range x {
			r, err := s.resolve(e)
			if err != nil {
				return nil, err
			}
			if r != noValue {
				out[k] = r
			}
		}
		return out, nil
	}
	return v, nil
}

func (s *stack) intrinsic(fn string, arg any) (any, error) {
	args, _ := arg.([]any)
	switch fn {
	case "Ref":
		switch name := arg.(string); name {
		case "AWS::AccountId":
			return s.account, nil
		case "AWS::Region":
			return s.region, nil
		case "AWS::Partition":
			return "aws", nil
		case "AWS::URLSuffix":
			return "amazonaws.com", nil
		case "AWS::NoValue":
			return noValue, nil
		default:
			if p, ok := s.params[name]; ok {
				if l, isList := p.([]string); isList {
					out := make([]any, len(l))
					for i, e := range l {
						out[i] = e
					}
					return out, nil
				}
				return p, nil
			}
			ref, _, err := s.physical(name)
			return ref, err
		}
	case "Fn::GetAtt":
		if len(args) != 2 || args[1] != "Arn" {
			return nil, fmt.Errorf("Fn::GetAtt %v", args)
		}
		_, arn, err := s.physical(args[0].(string))
		return arn, err
	case "Fn::Join":
		parts, err := s.resolve(args[1])
		if err != nil {
			return nil, err
		}
		var out []string
		for _, p := range parts.([]any) {
			if l, ok := p.([]any); ok {
				for _, e := range l {
					out = append(out, fmt.Sprint(e))
				}
				continue
			}
			out = append(out, fmt.Sprint(p))
		}
		return strings.Join(out, args[0].(string)), nil
	case "Fn::Split":
		v, err := s.resolve(args[1])
		if err != nil {
			return nil, err
		}
		var out []any
		for _, e := range strings.Split(v.(string), args[0].(string)) {
			out = append(out, e)
		}
		return out, nil
	case "Fn::Select":
		l, err := s.resolve(args[1])
		if err != nil {
			return nil, err
		}
		i := 0
		fmt.Sscan(fmt.Sprint(args[0]), &i)
		return l.([]any)[i], nil
	case "Fn::If":
		if s.conditions[args[0].(string)] {
			return s.resolve(args[1])
		}
		return s.resolve(args[2])
	}
	return nil, fmt.Errorf("unsupported intrinsic %s", fn)
}

// resource returns the resolved properties of a resource.
func (s *stack) resource(id string) (obj, error) {
	r := asObj(asObj(s.tmpl["Resources"])[id])
	if r == nil {
		return nil, fmt.Errorf("no resource %s", id)
	}
	if c, ok := r["Condition"].(string); ok && !s.conditions[c] {
		return nil, fmt.Errorf("resource %s is not created", id)
	}
	v, err := s.resolve(r["Properties"])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	return v.(obj), nil
}

// ofType returns the logical ids of the resources of a type, sorted.
func (s *stack) ofType(typ string) []string {
	var out []string
	for id, r := range asObj(s.tmpl["Resources"]) {
		if asObj(r)["Type"] == typ {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}
