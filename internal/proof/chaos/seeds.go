package chaos

import (
	"context"
	"sync"
)

// SeedsOptions bound a run of many seeds.
type SeedsOptions struct {
	// From is the first seed, N how many (From, From+1, ...).
	From, N uint64
	// Workers run in parallel (at least 1).
	Workers int
	// Generator switches parts of the generator.
	Generator Options
	// Shrink shrinks each failing seed.
	Shrink bool
	// Progress, when set, is called after each seed.
	Progress func(done uint64)
}

// Summary is what a run of many seeds found.
type Summary struct {
	Seeds       uint64
	WorldEvents int
	// Promotions is how many of the seeds run drew a promotion.
	Promotions int
	// LaunchHooks is how many of them drew a release with a launching
	// hook.
	LaunchHooks int
	// Worse, Events and Swaps sum the seeds' Result.Worse, Result.Events
	// and Result.Swaps.
	Worse, Events, Swaps int
	// Failed are the failing seeds' results (each with its Shrunk run
	// when asked), in seed order.
	Failed []*Result
	// Errors are the seeds that could not run.
	Errors map[uint64]error
}

// Violations is how many predicates the failing seeds broke.
func (s *Summary) Violations() int {
	n := 0
	for _, r := range s.Failed {
		n += len(r.Violations)
	}
	return n
}

// RunSeeds runs every seed of opts on a bounded pool of workers.
func RunSeeds(ctx context.Context, root string, opts SeedsOptions) *Summary {
	sum := &Summary{Errors: map[uint64]error{}}
	seeds := make(chan uint64)
	results := make([]*Result, opts.N)
	errs := make([]error, opts.N)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var done uint64
	for range max(1, opts.Workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range seeds {
				i := seed - opts.From
				results[i], errs[i] = runSeed(ctx, root, seed, opts)
				mu.Lock()
				done++
				if opts.Progress != nil {
					opts.Progress(done)
				}
				mu.Unlock()
			}
		}()
	}
	for seed := opts.From; seed < opts.From+opts.N && ctx.Err() == nil; seed++ {
		seeds <- seed
	}
	close(seeds)
	wg.Wait()
	for i, r := range results {
		seed := opts.From + uint64(i)
		switch {
		case errs[i] != nil:
			sum.Errors[seed] = errs[i]
		case r == nil:
			continue // not run: ctx ended
		default:
			sum.Seeds++
			sum.WorldEvents += r.WorldEvents
			sum.Worse += r.Worse
			sum.Events += r.Events
			sum.Swaps += r.Swaps
			if r.Scenario.promotes() {
				sum.Promotions++
			}
			if r.Scenario.hooks() {
				sum.LaunchHooks++
			}
			if r.Failed() {
				sum.Failed = append(sum.Failed, r)
			}
		}
	}
	return sum
}

// runSeed runs one seed, and shrinks it when it fails and opts say so.
func runSeed(ctx context.Context, root string, seed uint64, opts SeedsOptions) (*Result, error) {
	res, err := Run(ctx, root, Generate(seed, opts.Generator))
	if err != nil || !res.Failed() || !opts.Shrink {
		return res, err
	}
	_, res.Shrunk, err = Shrink(ctx, root, res.Scenario, res)
	return res, err
}
