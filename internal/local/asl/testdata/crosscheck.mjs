// crosscheck.mjs runs a state machine definition on aws-local-stepfunctions
// (an independent States Language interpreter) with scripted task outcomes,
// and prints everything an execution shows, for internal/local/asl's cross-check
// test.
//
// usage: node crosscheck.mjs <aws-local-stepfunctions ESM entry> <definition.json> <run.json>
//
// run.json is {"context": {"Execution": {"Id": ..., "Name": ...},
// "StateMachine": {"Id": ..., "Name": ...}, "StartTime": "<RFC 3339>"},
// "scenarios": [...]}; the scenarios run one
// after the other. A scenario is {"input": <execution input>, "outcomes":
// {"<Task state>": [<outcome>, ...]}}. Each invocation of
// a Task state takes the next outcome of its list (the last one repeats):
// {"result": <json>} returns the value, {"echo": "<field>", "merge": {...}}
// returns the payload's field merged with "merge", {"error": "<name>",
// "cause": "<message>"} fails with that error, {"hang": true} never returns
// (the state's TimeoutSeconds ends it). Time is virtual (see below).
//
// Output (stdout): a JSON array with one report per scenario, {"path":
// [state names entered, in order], "status": "SUCCEEDED" | "FAILED",
// "error", "cause", "output": <final output>, "calls": [{"state",
// "payload", "at": milliseconds since the execution started} per
// invocation, in order], "exits": [{"state", "output"} per state left, in
// order], "attempts": {"<Task state>": invocations}}.
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

// aws-local-stepfunctions 3 needs Node 22's Promise.withResolvers.
if (typeof Promise.withResolvers !== 'function') {
  Promise.withResolvers = function withResolvers() {
    let resolve;
    let reject;
    const promise = new this((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

const [entry, definitionFile, runFile] = process.argv.slice(2);
if (!entry || !definitionFile || !runFile) {
  console.error('usage: node crosscheck.mjs <module entry> <definition.json> <run.json>');
  process.exit(2);
}
const run = JSON.parse(readFileSync(runFile, 'utf8'));

// Virtual time, as the Go side's virtual clock: every timer fires as soon
// as the event loop reaches it and moves the clock forward by its delay,
// and Date reads that clock. So Wait states, retry intervals (IntervalSeconds,
// BackoffRate, MaxDelaySeconds) and TimeoutSeconds run as
// aws-local-stepfunctions computes them, without sleeping, and each call's
// time shows them. A timer that is cleared before it fires (a Task's
// timeout when the task returns first: a scripted handler settles within
// microtasks, before any timer runs) moves nothing. The execution starts at
// the Go side's start time, which becomes $$.Execution.StartTime.
const startMillis = Date.parse(run.context.StartTime);
let elapsedMillis = 0;
globalThis.setTimeout = (fn, ms = 0, ...args) =>
  setImmediate(() => {
    elapsedMillis += Math.max(0, ms);
    fn(...args);
  });
globalThis.clearTimeout = (handle) => clearImmediate(handle);
const RealDate = Date;
globalThis.Date = class extends RealDate {
  constructor(...args) {
    if (args.length === 0) {
      super(startMillis + elapsedMillis);
    } else {
      super(...args);
    }
  }
  static now() {
    return startMillis + elapsedMillis;
  }
};

const { StateMachine } = await import(pathToFileURL(entry).href);
const definition = JSON.parse(readFileSync(definitionFile, 'utf8'));

// Bug of aws-local-stepfunctions 3.0.0: an explicit "ResultPath": "$"
// (state or Catch) is stored under a key literally named "$" (its
// processResultPath strips only a "$." prefix, then sets the path "$"), so
// the result never replaces the state's input. An omitted ResultPath
// defaults to "$" (States Language, "ResultPath"), so the definition it runs
// omits it instead; internal/local/asl runs the definition as written.
function withoutRootResultPath(def) {
  const out = structuredClone(def);
  for (const state of Object.values(out.States)) {
    if (state.ResultPath === '$') {
      delete state.ResultPath;
    }
    for (const catcher of state.Catch ?? []) {
      if (catcher.ResultPath === '$') {
        delete catcher.ResultPath;
      }
    }
  }
  return out;
}

// aws-local-stepfunctions 3.0.0 does not fill $$.State.RetryCount. The
// context gives it this marker, and the payload of each invocation gets the
// retry count in its place: the number of failed invocations of the same
// Task state directly before it (a retry follows its failed attempt at once;
// whether there is a retry at all is still aws-local-stepfunctions' call).
const RETRY_COUNT_MARKER = -987654321;

function replaceMarker(value, count) {
  if (value === RETRY_COUNT_MARKER) {
    return count;
  }
  if (Array.isArray(value)) {
    return value.map((v) => replaceMarker(v, count));
  }
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, replaceMarker(v, count)]));
  }
  return value;
}

const machine = new StateMachine(withoutRootResultPath(definition), { validationOptions: { checkArn: false } });
const reports = [];
for (const scenario of run.scenarios) {
  reports.push(await runScenario(scenario));
}
process.stdout.write(JSON.stringify(reports) + '\n');

async function runScenario(scenario) {
  const calls = [];
  const attempts = {};
  let last = { state: '', failed: false };
  let retryCount = 0;

  elapsedMillis = 0;

  function outcome(stateName, rawPayload) {
    retryCount = last.state === stateName && last.failed ? retryCount + 1 : 0;
    const payload = replaceMarker(rawPayload, retryCount);
    calls.push({ state: stateName, payload, at: elapsedMillis });
    const list = scenario.outcomes?.[stateName];
    if (!list || list.length === 0) {
      throw new Error(`scenario has no outcome for task state ${stateName}`);
    }
    const n = attempts[stateName] ?? 0;
    attempts[stateName] = n + 1;
    const o = list[Math.min(n, list.length - 1)];
    last = { state: stateName, failed: o.error !== undefined || o.hang === true };
    if (o.hang) {
      return new Promise(() => {});
    }
    if (o.error !== undefined) {
      const err = new Error(o.cause ?? '');
      err.name = o.error;
      throw err;
    }
    if (o.echo !== undefined) {
      const base = o.echo === '' ? payload : payload?.[o.echo];
      if (o.merge !== undefined) {
        return { ...base, ...o.merge };
      }
      return base;
    }
    return o.result;
  }

  // Every Task state, those of a Map's ItemProcessor included (the
  // overrides apply inside a Map's iterations too). A callback task (its
  // Resource ends in .waitForTaskToken) is answered by its handler's
  // result, as the Go side answers it with SendTaskSuccess.
  const taskResourceLocalHandlers = {};
  const addTasks = (states) => {
    for (const [name, state] of Object.entries(states)) {
      if (state.Type === 'Task') {
        taskResourceLocalHandlers[name] = async (payload) => outcome(name, payload);
      }
      if (state.ItemProcessor) {
        addTasks(state.ItemProcessor.States);
      }
    }
  };
  addTasks(definition.States);

  const execution = machine.run(scenario.input ?? {}, {
    overrides: { taskResourceLocalHandlers },
    context: {
      Execution: run.context.Execution,
      StateMachine: run.context.StateMachine,
      State: { RetryCount: RETRY_COUNT_MARKER },
      // aws-local-stepfunctions 3.0.0 makes no task tokens: $$.Task.Token
      // is given here; both sides' reports mask every token.
      Task: { Token: 'crosscheck-task-token' },
    },
  });

  const path = [];
  const exits = [];
  const collect = (async () => {
    for await (const event of execution.eventLogs) {
      if (event.type === 'StateEntered') {
        path.push(event.state.name);
      }
      if (event.type === 'StateExited') {
        exits.push({ state: event.state.name, output: event.state.output });
      }
    }
  })();

  let report;
  try {
    const output = await execution.result;
    report = { path, status: 'SUCCEEDED', output };
  } catch (err) {
    const cause = err.cause ?? err;
    report = { path, status: 'FAILED', error: cause.name, cause: cause.message };
  }
  await collect;
  return { ...report, calls, exits, attempts };
}
