// Package console owns the local region's web console: a page, served at
// the region's root to a browser, that shows the executions of the deploy
// state machine (running and past), each as the graph of the branch it
// takes (laid out top to bottom to the page's width, its ends at the
// bottom) with the current state and the transitions taken lit, and its
// history; a state or an event clicked shows its input, output, error and
// cause (from the history's event details), and the simulated world (groups,
// instances with their lifecycle and health, load balancer registrations
// and cut connections, alarms), updating live.
//
// It is plain HTML, CSS and JavaScript embedded in the binary: no build
// step, no CDN, nothing fetched from outside (its Content-Security-Policy
// allows only the region itself). The page reads what any client reads:
// the Step Functions API (ListStateMachines, DescribeStateMachine,
// ListExecutions, GetExecutionHistory) and the region's read-only world
// view. Handler serves the page and its assets; Wants tells a browser's
// request for it from an SDK's (an SDK's GET / is S3's ListBuckets).
//
// The page follows the newest running deploy, re-reading the executions
// at every refresh, unless the URL pins one (#execution=ARN); the tab's
// title names the execution shown. It tells a deploy from a promotion or
// a query by the execution's input, as the machine's first Choice does,
// and lists deploys, promotions and reconcile passes (with queries) apart,
// each paged. It reads the executions list to its end (nextToken) once,
// then at each refresh only the pages that may have changed.
package console
