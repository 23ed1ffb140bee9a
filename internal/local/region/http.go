package region

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ferryhq/ferry/internal/execution"
	"github.com/ferryhq/ferry/internal/local/asl"
	"github.com/ferryhq/ferry/internal/local/console"
	"github.com/ferryhq/ferry/internal/local/sameorigin"
	"github.com/ferryhq/ferry/internal/store/ledger"
)

// Paths of the region's own read-only views.
const (
	// WorldPath serves the simulated world's sim.Snapshot as JSON.
	WorldPath = "/_ferry/world"
	// InfoPath serves the region's Info as JSON.
	InfoPath = "/_ferry/info"
	// AnalysisPath serves a release's last canary analysis (the ledger's
	// record, execution.Analysis) as JSON, the release named by the
	// query's project, config and release; 404 when none was judged.
	AnalysisPath = "/_ferry/analysis"
	// EventsPath serves every event put on a default event bus of the
	// simulated world ([]sim.BusEvent, oldest first) as JSON.
	EventsPath = "/_ferry/events"
	// HistoryPath serves the history of the execution the query's
	// execution (its ARN) names, all of it, as GetExecutionHistory's
	// events with every payload's packed parts unpacked
	// (execution.Unpacked): the documents as people read them; 404 when
	// no such execution.
	HistoryPath = "/_ferry/history"
)

// sfnTargetPrefix starts the X-Amz-Target header of every Step Functions
// request.
const sfnTargetPrefix = "AWSStepFunctions."

// shutdownTimeout bounds a graceful shutdown of Serve, in wall time.
const shutdownTimeout = 5 * time.Second

// Handler serves the whole region on one port:
//
//   - POST requests with X-Amz-Target: AWSStepFunctions.<Op> go to the Step
//     Functions JSON 1.0 API (StartExecution, DescribeExecution,
//     GetExecutionHistory, ListExecutions, StopExecution,
//     DescribeStateMachine, ListStateMachines);
//   - a form POSTed to "/" to STS (GetCallerIdentity only, answered with
//     the region's account);
//   - a browser's GET / and GET /_ferry/console/... to the console (package
//     console: console.Wants tells a browser from an SDK);
//   - GET /_ferry/help/... to the reference's pages (Options.Help);
//   - GET /_ferry/world, /_ferry/info, /_ferry/events (the events on the
//     default buses), /_ferry/analysis and /_ferry/history to the
//     read-only views,
//     POST /_ferry/world to a change from outside ferry (Meddle);
//   - everything else to the S3 API (path-style addressing).
//
// Requests are not authenticated: any signature (or none) is accepted. So
// that no web page its user opens can drive it, every request but GET and
// HEAD from another origin is refused, no CORS is answered
// (sameorigin.Guard), the Step Functions API and POST /_ferry/world take
// only their JSON media types, and S3 objects are served as attachments
// (package s3server).
func (r *Region) Handler() http.Handler {
	s3h := r.s3srv.Handler()
	page := console.Handler()
	return sameorigin.Guard(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			// A panic serving one request is a bug: log it in one line and
			// answer 500, rather than net/http's stack trace on stderr.
			if p := recover(); p != nil {
				r.logger.Error("internal error serving a request", "method", req.Method, "path", req.URL.Path, "panic", fmt.Sprint(p))
				http.Error(rec, "internal error", http.StatusInternalServerError)
			}
		}()
		kind := "s3"
		switch target := req.Header.Get("X-Amz-Target"); {
		case strings.HasPrefix(target, sfnTargetPrefix):
			kind = "sfn"
			r.serveSFN(rec, req, strings.TrimPrefix(target, sfnTargetPrefix))
		case isSTS(req):
			kind = "sts"
			r.serveSTS(rec, req)
		case console.Wants(req):
			kind = "console"
			page.ServeHTTP(rec, req)
		case strings.HasPrefix(req.URL.Path+"/", console.HelpPath):
			kind = "help"
			r.serveHelp(rec, req)
		case strings.HasPrefix(req.URL.Path, "/_ferry/"):
			kind = "ferry"
			r.serveView(rec, req)
		default:
			s3h.ServeHTTP(rec, req)
		}
		if r.logger.Enabled(req.Context(), slog.LevelDebug) {
			r.logger.Debug("api call", "api", kind, "method", req.Method, "path", req.URL.Path,
				"target", req.Header.Get("X-Amz-Target"), "status", rec.status)
		}
	}))
}

// statusRecorder remembers the status code written, for the log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// Flush flushes the underlying writer when it can.
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// serveHelp serves the reference's pages under console.HelpPath with
// Options.Help; the path without its slash is redirected to it.
func (r *Region) serveHelp(w http.ResponseWriter, req *http.Request) {
	switch {
	case r.opts.Help == nil:
		writeViewError(w, http.StatusNotFound, "this region serves no help pages (ferry local does)")
	case req.URL.Path+"/" == console.HelpPath:
		http.Redirect(w, req, console.HelpPath, http.StatusMovedPermanently)
	default:
		http.StripPrefix(console.HelpPath, r.opts.Help).ServeHTTP(w, req)
	}
}

// serveView serves the read-only views of the region.
func (r *Region) serveView(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodPost && req.URL.Path == WorldPath {
		r.serveMeddle(w, req)
		return
	}
	if req.Method != http.MethodGet && req.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeViewError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s is read-only: use GET (POST %s meddles with the world)", req.URL.Path, WorldPath))
		return
	}
	var v any
	status, msg := http.StatusOK, ""
	switch req.URL.Path {
	case WorldPath:
		v = r.world.Snapshot()
	case InfoPath:
		v = r.Info()
	case EventsPath:
		v = r.world.BusEvents()
	case AnalysisPath:
		v, status, msg = r.analysisView(req)
	case HistoryPath:
		v, status, msg = r.historyView(req)
	default:
		status, msg = http.StatusNotFound, fmt.Sprintf("no view at %s (there are %s, %s, %s, %s and %s)", req.URL.Path, WorldPath, InfoPath, EventsPath, AnalysisPath, HistoryPath)
	}
	if status != http.StatusOK {
		writeViewError(w, status, msg)
		return
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		writeViewError(w, http.StatusInternalServerError, err.Error())
		return
	}
	b = append(b, '\n')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	if req.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

// analysisView reads the canary analysis of the release the request's
// query names (project, config, release), with the HTTP status to answer
// and, unless 200, why.
func (r *Region) analysisView(req *http.Request) (execution.Analysis, int, string) {
	q := req.URL.Query()
	project, config, id := q.Get("project"), q.Get("config"), q.Get("release")
	if project == "" || config == "" || id == "" {
		return execution.Analysis{}, http.StatusBadRequest, AnalysisPath + " needs the query parameters project, config and release"
	}
	a, found, err := ledger.New(r.s3, r.info.Bucket).GetAnalysis(req.Context(), project, config, id)
	switch {
	case err != nil:
		return a, http.StatusInternalServerError, "reading the canary analysis: " + err.Error()
	case !found:
		return a, http.StatusNotFound, fmt.Sprintf("release %s of %s %s has no canary analysis", id, project, config)
	}
	return a, http.StatusOK, ""
}

// historyView is the history of the execution the request's query names
// (execution: its ARN), its payloads unpacked (HistoryPath), with the
// HTTP status to answer and, unless 200, why. A payload whose packed part
// does not unpack is shown as recorded.
func (r *Region) historyView(req *http.Request) (any, int, string) {
	arn := req.URL.Query().Get("execution")
	if arn == "" {
		return nil, http.StatusBadRequest, HistoryPath + " needs the query parameter execution (an execution's ARN)"
	}
	x, err := r.Execution(arn)
	if err != nil {
		return nil, http.StatusNotFound, err.Error()
	}
	events := x.History()
	for i := range events {
		events[i] = withPayloads(events[i], func(doc string) string {
			plain, _ := execution.Unpacked(doc)
			return plain
		})
	}
	return struct {
		Events []asl.Event `json:"events"`
	}{events}, http.StatusOK, ""
}

func writeViewError(w http.ResponseWriter, status int, msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

// Serve serves Handler on ln until ctx is done, then shuts down gracefully
// (in-flight requests get a few seconds to finish) and returns nil. Any
// other error of the server is returned. It does not Close the region.
func (r *Region) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: r.Handler(), ReadHeaderTimeout: 10 * time.Second}
	shut := make(chan error, 1)
	stop := context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		shut <- srv.Shutdown(sctx)
	})
	err := srv.Serve(ln)
	if !errors.Is(err, http.ErrServerClosed) {
		stop()
		return fmt.Errorf("region: serve: %w", err)
	}
	if err := <-shut; err != nil {
		return fmt.Errorf("region: shutdown: %w", err)
	}
	return nil
}
