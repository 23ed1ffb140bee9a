package release_test

import (
	"errors"
	"fmt"

	"github.com/ferryhq/ferry/internal/failure"
	"github.com/ferryhq/ferry/internal/release"
)

// A release file is decoded strictly, then validated with its defaults
// applied: Validate returns nil for a release ferry can deploy.
func Example() {
	r, err := release.DecodeFile([]byte(`{
		"project_name": "acme/shop",
		"config_name": "production",
		"subnets": ["private-a", "private-b"],
		"ami": "shop-2026-11",
		"services": {"web": {"instance_type": "t3.small", "security_groups": ["web"]}}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := r.Validate(false); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.ProjectName, r.ConfigName, r.ServiceNames())
	fmt.Println("timeout:", r.TimeoutDuration())
	// Output:
	// acme/shop production [web]
	// timeout: 10m0s
}

// A release ferry cannot deploy is refused with every problem at once,
// each "path: message", as a *failure.BadReleaseError, named as the state
// machine catches it.
func Example_refused() {
	r, err := release.DecodeFile([]byte(`{
		"project_name": "acme/shop",
		"config_name": "production",
		"ami": "shop-2026-11",
		"services": {"web": {"instance_type": "t3.small", "security_groups": ["web"],
			"autoscaling": {"min_size": 3, "max_size": 2}}}
	}`))
	if err == nil {
		err = r.Validate(false)
	}
	var bad *failure.BadReleaseError
	if errors.As(err, &bad) {
		fmt.Println(bad.ErrorName())
		for _, p := range bad.Problems {
			fmt.Println(p)
		}
	}
	// Output:
	// BadReleaseError
	// services.web.autoscaling.max_size: must be at least min_size (3)
	// services.web.subnets: required because the release sets no subnets
}

// A release file is strict: a misspelt key is refused, naming where it
// is and the key it probably means.
func ExampleDecodeFile() {
	_, err := release.DecodeFile([]byte(`{"project_name": "acme/shop", "config_name": "production", "servces": {}}`))
	fmt.Println(err)
	// Output:
	// bad release: servces: unknown field (did you mean services?)
}
