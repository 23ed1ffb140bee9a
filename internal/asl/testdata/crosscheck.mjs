// crosscheck.mjs runs a state machine definition on aws-local-stepfunctions
// (an independent States Language interpreter) with scripted task outcomes,
// and prints the path it took, for internal/asl's cross-check test.
//
// usage: node crosscheck.mjs <aws-local-stepfunctions ESM entry> <definition.json> <scenarios.json>
//
// scenarios.json is an array of scenarios, run one after the other. A
// scenario is {"input": <execution input>, "outcomes": {"<Task state>":
// [<outcome>, ...]}}. Each invocation of a Task state takes the next outcome
// of its list (the last one repeats): {"result": <json>} returns the value,
// {"echo": "<field>", "merge": {...}} returns the payload's field merged with
// "merge", {"error": "<name>", "cause": "<message>"} fails with that error.
// Wait states and retry intervals take no time.
//
// Output (stdout): a JSON array with one report per scenario, {"path":
// [state names entered, in order], "status": "SUCCEEDED" | "FAILED",
// "error": ..., "cause": ...}.
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

const [entry, definitionFile, scenariosFile] = process.argv.slice(2);
if (!entry || !definitionFile || !scenariosFile) {
  console.error('usage: node crosscheck.mjs <module entry> <definition.json> <scenarios.json>');
  process.exit(2);
}
const { StateMachine } = await import(pathToFileURL(entry).href);
const definition = JSON.parse(readFileSync(definitionFile, 'utf8'));
const scenarios = JSON.parse(readFileSync(scenariosFile, 'utf8'));

const machine = new StateMachine(definition, { validationOptions: { checkArn: false } });
const reports = [];
for (const scenario of scenarios) {
  reports.push(await runScenario(scenario));
}
process.stdout.write(JSON.stringify(reports) + '\n');

async function runScenario(scenario) {
  const calls = {};
  function outcome(stateName, payload) {
    const list = scenario.outcomes?.[stateName];
    if (!list || list.length === 0) {
      throw new Error(`scenario has no outcome for task state ${stateName}`);
    }
    const n = calls[stateName] ?? 0;
    calls[stateName] = n + 1;
    const o = list[Math.min(n, list.length - 1)];
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

const taskResourceLocalHandlers = {};
const waitTimeOverrides = {};
const retryIntervalOverrides = {};
for (const [name, state] of Object.entries(definition.States)) {
  if (state.Type === 'Task') {
    taskResourceLocalHandlers[name] = async (payload) => outcome(name, payload);
    retryIntervalOverrides[name] = 0;
  }
  if (state.Type === 'Wait') {
    waitTimeOverrides[name] = 0;
  }
}

const execution = machine.run(scenario.input ?? {}, {
  overrides: { taskResourceLocalHandlers, waitTimeOverrides, retryIntervalOverrides },
  context: {
    Execution: { Id: 'arn:aws:states:us-east-1:123456789012:execution:ferry:crosscheck', Name: 'crosscheck' },
    // aws-local-stepfunctions 3.0.0 does not fill $$.State.RetryCount, which
    // every ferry task passes to the deployer: a fixed 0 stands in (the
    // scripted outcomes do not depend on it).
    State: { RetryCount: 0 },
  },
});

const path = [];
const collect = (async () => {
  for await (const event of execution.eventLogs) {
    if (event.type === 'StateEntered') {
      path.push(event.state.name);
    }
  }
})();

let report;
try {
  await execution.result;
  report = { path, status: 'SUCCEEDED' };
} catch (err) {
  const cause = err.cause ?? err;
  report = { path, status: 'FAILED', error: cause.name, cause: cause.message };
}
await collect;
return report;
}
