package asl

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
)

// mapState is what a Map state adds to a state: its ItemProcessor (INLINE
// mode: the iterations run in the execution, Step Functions Developer
// Guide, "Map state in Inline mode"), where its items are, how each
// iteration's input is built, and how many run at once.
type mapState struct {
	processor      *Machine
	itemsPath      *path
	itemSelector   *template
	maxConcurrency int
}

// The events of a Map state beyond MapStateEntered and MapStateExited.
const (
	EventMapStateEntered      EventType = "MapStateEntered"
	EventMapStateExited       EventType = "MapStateExited"
	EventMapStateStarted      EventType = "MapStateStarted"
	EventMapStateSucceeded    EventType = "MapStateSucceeded"
	EventMapStateFailed       EventType = "MapStateFailed"
	EventMapStateAborted      EventType = "MapStateAborted"
	EventMapIterationStarted  EventType = "MapIterationStarted"
	EventMapIterationSucceded EventType = "MapIterationSucceeded"
	EventMapIterationFailed   EventType = "MapIterationFailed"
	EventMapIterationAborted  EventType = "MapIterationAborted"
)

// MapStateStartedDetails are the details of MapStateStarted: how many
// iterations the Map runs.
type MapStateStartedDetails struct {
	Length int `json:"length"`
}

// MapIterationDetails are the details of every MapIteration* event: the
// Map state's name and the iteration's index.
type MapIterationDetails struct {
	Name  string `json:"name"`
	Index int    `json:"index"`
}

func (s *state) parseMap(o *fieldSet) error {
	raw, ok := o.m["ItemProcessor"]
	if !ok {
		return fmt.Errorf("%s: ItemProcessor is required", o.where)
	}
	where := o.where + ": ItemProcessor"
	top, err := objectOf(raw, where)
	if err != nil {
		return err
	}
	po := &fieldSet{where: where, m: top}
	if err := po.only("StartAt", "States", "Comment", "ProcessorConfig"); err != nil {
		return err
	}
	if cfg, ok := top["ProcessorConfig"]; ok {
		var pc struct {
			Mode string `json:"Mode"`
		}
		if err := json.Unmarshal(cfg, &pc); err != nil || (pc.Mode != "" && pc.Mode != "INLINE") {
			return fmt.Errorf("%s: ProcessorConfig: only Mode INLINE is supported", where)
		}
	}
	p := &Machine{states: map[string]*state{}}
	if p.startAt, err = po.str("StartAt", true); err != nil {
		return err
	}
	if err := p.parseStates(top, where); err != nil {
		return err
	}
	s.mapped = &mapState{processor: p}
	if s.mapped.itemsPath, err = o.refPath("ItemsPath"); err != nil {
		return err
	}
	if s.mapped.itemSelector, err = o.template("ItemSelector"); err != nil {
		return err
	}
	if n, ok, err := o.integer("MaxConcurrency", 0, 1<<31-1); err != nil {
		return err
	} else if ok {
		s.mapped.maxConcurrency = int(n)
	}
	return s.parseRetryCatch(o)
}

// attemptMap runs one attempt of a Map state: its items, every iteration
// (at most MaxConcurrency at once; 0 means no limit), and its result, the
// array of the iterations' outputs in the items' order. The first
// iteration to fail fails the Map, and the others are aborted.
func (x *Execution) attemptMap(ctx context.Context, s *state, raw any, _ int, ctxObj any) (any, error) {
	eff, err := applyInputPath(s.inputPath, raw, ctxObj)
	if err != nil {
		return nil, err
	}
	items := eff
	if p := s.mapped.itemsPath; p != nil {
		v, ok := p.get(eff, ctxObj)
		if !ok {
			return nil, stateErr(ErrorRuntime, "ItemsPath '%s' of state '%s' matched nothing in '%s'", p, s.name, encodeJSON(eff))
		}
		items = v
	}
	list, ok := items.([]any)
	if !ok {
		return nil, stateErr(ErrorRuntime, "the items of Map state '%s' are not an array: '%s'", s.name, encodeJSON(items))
	}
	x.emit(Event{Type: EventMapStateStarted, MapStateStarted: &MapStateStartedDetails{Length: len(list)}})
	results, err := x.iterate(ctx, s, list, eff, ctxObj)
	if err != nil {
		if ctx.Err() == nil {
			x.emit(Event{Type: EventMapStateFailed})
		}
		return nil, err
	}
	x.emit(Event{Type: EventMapStateSucceeded})
	return taskOutput(s, raw, results, ctxObj)
}

// iterate runs the iterations of Map state s over items. Each iteration
// is a participant of its own on a Waiter that counts them, and the Map
// waits for the last one as for an event, so that discrete-event time
// passes only when every iteration waits.
func (x *Execution) iterate(ctx context.Context, s *state, items []any, eff, ctxObj any) ([]any, error) {
	results := make([]any, len(items))
	if len(items) == 0 {
		return results, nil
	}
	workers := len(items)
	if n := s.mapped.maxConcurrency; n > 0 && n < workers {
		workers = n
	}
	iterCtx, abort := context.WithCancel(ctx)
	defer abort()
	var (
		mu      sync.Mutex
		next    int
		left    = workers
		failure error
	)
	done := NewAwait(x.waiter, 0)
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next == len(items) || failure != nil {
			return 0, false
		}
		next++
		return next - 1, true
	}
	for range workers {
		leave := forkOf(x.waiter)
		go func() {
			defer leave()
			for i, ok := take(); ok; i, ok = take() {
				out, err := x.iteration(iterCtx, s, i, items[i], eff, ctxObj)
				mu.Lock()
				if err != nil && failure == nil {
					failure = err
					abort()
				}
				results[i] = out
				mu.Unlock()
			}
			mu.Lock()
			left--
			last := left == 0
			mu.Unlock()
			if last {
				done.Wake() // before leave: this worker is still busy
			}
		}()
	}
	if err := done.Wait(ctx); err != nil {
		return nil, err
	}
	if failure != nil {
		return nil, failure
	}
	return results, nil
}

// iteration runs iteration i of Map state s over item.
func (x *Execution) iteration(ctx context.Context, s *state, i int, item, eff, ctxObj any) (any, error) {
	details := MapIterationDetails{Name: s.name, Index: i}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	x.emit(iterationEvent(EventMapIterationStarted, details))
	input := item
	if sel := s.mapped.itemSelector; sel != nil {
		var err error
		if input, err = sel.apply(eff, withMapItem(ctxObj, i, item)); err != nil {
			x.emit(iterationEvent(EventMapIterationFailed, details))
			return nil, err
		}
	}
	out, err := x.runGraph(ctx, s.mapped.processor, input)
	switch {
	case ctx.Err() != nil:
		x.emit(iterationEvent(EventMapIterationAborted, details))
		return nil, ctx.Err()
	case err != nil:
		x.emit(iterationEvent(EventMapIterationFailed, details))
		return nil, err
	}
	x.emit(iterationEvent(EventMapIterationSucceded, details))
	return out, nil
}

// withMapItem is a copy of the context object with $$.Map.Item, for a Map's
// ItemSelector.
func withMapItem(ctxObj any, i int, item any) any {
	m, _ := ctxObj.(map[string]any)
	c := make(map[string]any, len(m)+1)
	for k, v := range m {
		c[k] = v
	}
	c["Map"] = map[string]any{"Item": map[string]any{"Index": json.Number(strconv.Itoa(i)), "Value": item}}
	return c
}

// iterationEvent is a MapIteration* event with its details.
func iterationEvent(typ EventType, d MapIterationDetails) Event {
	ev := Event{Type: typ}
	switch typ {
	case EventMapIterationStarted:
		ev.MapIterationStarted = &d
	case EventMapIterationSucceded:
		ev.MapIterationSucceeded = &d
	case EventMapIterationFailed:
		ev.MapIterationFailed = &d
	default:
		ev.MapIterationAborted = &d
	}
	return ev
}
