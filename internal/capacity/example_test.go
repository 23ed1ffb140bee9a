package capacity_test

import (
	"fmt"

	"github.com/ferryhq/ferry/internal/capacity"
)

// A service whose previous group wanted 4 instances, with a spread of
// 0.25: the new group launches one more for headroom, and the service is
// healthy once 3 of them are.
func ExampleCompute() {
	b := capacity.Bounds{MinSize: 2, MaxSize: 10, Spread: 0.25}
	previous := 4
	p, err := capacity.Compute(b, &previous)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("desired %d, launch %d, healthy at %d\n", p.Desired, p.Launch, p.Healthy)

	// A new service (no previous group) starts at min_size.
	p, _ = capacity.Compute(b, nil)
	fmt.Printf("new: desired %d, launch %d, healthy at %d\n", p.Desired, p.Launch, p.Healthy)

	// Bounds a release could not hold are an error, naming the field.
	_, err = capacity.Compute(capacity.Bounds{MinSize: 3, MaxSize: 2}, nil)
	fmt.Println(err)
	// Output:
	// desired 4, launch 5, healthy at 3
	// new: desired 2, launch 3, healthy at 2
	// max_size 2 is below min_size 3
}

// A canary of 1 instance, then 50%, then all: each stage is the group's
// size, how many healthy instances complete it, and its minimum.
func ExamplePlan_Stages() {
	b := capacity.Bounds{MinSize: 2, MaxSize: 10}
	previous := 6
	p, _ := capacity.Compute(b, &previous)
	for _, s := range p.Stages(b, []capacity.Step{{N: 1}, {N: 50, Percent: true}, {N: 100, Percent: true}}) {
		fmt.Printf("launch %d, healthy at %d, min %d\n", s.Launch, s.Healthy, s.MinSize)
	}
	// Output:
	// launch 1, healthy at 1, min 1
	// launch 3, healthy at 3, min 2
	// launch 6, healthy at 6, min 2
}

// max_terms is a tolerance: with the default of 0 the first terminating
// instance halts the deploy.
func ExampleBounds_ShouldHalt() {
	b := capacity.Bounds{MinSize: 1, MaxSize: 3}
	fmt.Println(b.ShouldHalt(0), b.ShouldHalt(1))
	b.MaxTerms = 1
	fmt.Println(b.ShouldHalt(1), b.ShouldHalt(2))
	// Output:
	// false true
	// false true
}
