// Package console owns the local region's web console: a page, served at
// the region's root to a browser, that shows the executions of the deploy
// state machine and the simulated world, updating live (every second while
// the tab is visible):
//
//   - Deploys, promotions and reconcile passes (with plans and drift
//     queries) in separate paged lists, told apart by each execution's
//     input as the machine's first Choice tells them. The executions list
//     is read to its end (nextToken) once, then at each refresh only the
//     pages that may have changed.
//   - The execution shown: the one the URL pins (#execution=ARN), else
//     the newest running deploy, re-chosen at every refresh, so a deploy
//     started after the page opened is shown within seconds. The tab's
//     title names it.
//   - Its graph: only the branch its input takes, laid out top to bottom
//     to the page's width, the ends (Success, FailureClean, FailureDirty)
//     in the bottom row, the current state and the transitions taken lit.
//   - Its history. A state or an event clicked shows its input, output,
//     error and cause (from the history's event details), the state
//     documents' packed parts unpacked (the region's history view).
//   - For a deploy, each service's healthy instances of its target, its
//     stability window and the bake's countdown, read from the latest
//     state document (execution.State's Health and Bake) and counted
//     on the region's clock.
//   - The world: groups and their instances, each load balancer's healthy
//     instances and the connections it cut, alarms.
//   - In its header, a link to the reference's pages, which the region
//     serves at HelpPath.
//
// It is plain HTML, CSS and JavaScript embedded in the binary: no build
// step, no CDN, nothing fetched from outside (its Content-Security-Policy
// allows only the region itself). The page reads what any client reads,
// with same-origin requests whose bodies are JSON: the Step Functions API
// (ListStateMachines, DescribeStateMachine, ListExecutions,
// DescribeExecution) and the region's read-only views (GET /_ferry/info,
// /_ferry/world, /_ferry/analysis, and /_ferry/history: an execution's
// history, its documents unpacked with execution.Unpacked, the one reader
// of the packed parts). Handler serves the page and its
// assets; Wants tells a browser's request for it from an SDK's (an SDK's
// GET / is S3's ListBuckets).
package console
