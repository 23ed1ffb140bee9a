package sameorigin

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// ForeignError is a request refused because a web page of another origin
// sent it.
type ForeignError struct {
	// Origin is the request's Origin ("null" for an opaque origin), or
	// its Sec-Fetch-Site when it sent no Origin.
	Origin string
}

func (e *ForeignError) Error() string {
	return fmt.Sprintf("refused: a web page of another origin (%s) may not change the local region; "+
		"only its own console and clients that send no Origin (the AWS SDKs and CLI) may", e.Origin)
}

// Check returns a *ForeignError when req was sent by a web page of an
// origin other than the server's (http or https://<req.Host>): its Origin
// header names another origin (or "null"), or its Sec-Fetch-Site is
// neither same-origin nor none. A request with neither header (an SDK, the
// CLI, curl) passes.
func Check(req *http.Request) error {
	if o := req.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if o == "null" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || !strings.EqualFold(u.Host, req.Host) {
			return &ForeignError{Origin: o}
		}
	}
	switch site := req.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
		return nil
	default:
		return &ForeignError{Origin: "Sec-Fetch-Site: " + site}
	}
}

// preflight reports whether req is a CORS preflight.
func preflight(req *http.Request) bool {
	return req.Method == http.MethodOptions && req.Header.Get("Access-Control-Request-Method") != ""
}

// Guard serves next, but refuses with 403 every CORS preflight and every
// request but GET and HEAD that Check refuses, and removes any
// Access-Control-* header next answers (so no other origin reads a
// response).
func Guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if preflight(req) {
			refuse(w, http.StatusForbidden, "refused: the local region answers no cross-origin request (CORS preflight from "+
				req.Header.Get("Origin")+"); its console is served from the same origin")
			return
		}
		if req.Method != http.MethodGet && req.Method != http.MethodHead {
			if err := Check(req); err != nil {
				refuse(w, http.StatusForbidden, err.Error())
				return
			}
		}
		next.ServeHTTP(&hooked{ResponseWriter: w, hook: stripCORS}, req)
	})
}

// ContentType returns an error naming the media type req's body has when
// it is none of want (media types, compared without parameters).
func ContentType(req *http.Request, want ...string) error {
	got := req.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(got)
	if err == nil {
		for _, w := range want {
			if strings.EqualFold(mt, w) {
				return nil
			}
		}
	}
	return fmt.Errorf("refused: the body's Content-Type is %q, not %s", got, strings.Join(want, " or "))
}

// FormContentTypes are the media types a web page can send without a CORS
// preflight (and an HTML form with): no endpoint that expects anything
// else should accept them.
var FormContentTypes = []string{"application/x-www-form-urlencoded", "multipart/form-data", "text/plain"}

// ServeAsAttachment sets the headers that keep a response from being
// rendered as a page of the server's origin: Content-Disposition:
// attachment (a browser downloads it), X-Content-Type-Options: nosniff
// (no type guessed from the bytes) and Content-Security-Policy: sandbox
// (should a browser render it anyway, it runs in an opaque origin, without
// scripts). They replace any the response had.
func ServeAsAttachment(h http.Header) {
	h.Set("Content-Disposition", "attachment")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "sandbox; default-src 'none'")
}

// refuse writes status with msg as plain text.
func refuse(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = fmt.Fprintln(w, msg)
}

// stripCORS removes every Access-Control-* header of h.
func stripCORS(h http.Header) {
	for k := range h {
		if strings.HasPrefix(k, "Access-Control-") {
			h.Del(k)
		}
	}
}

// Attachments serves next, and every answer to a GET or HEAD as an
// attachment (ServeAsAttachment), whatever headers next set.
func Attachments(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodGet || req.Method == http.MethodHead {
			w = &hooked{ResponseWriter: w, hook: ServeAsAttachment}
		}
		next.ServeHTTP(w, req)
	})
}

// hooked calls hook on the response's headers as they are written.
type hooked struct {
	http.ResponseWriter
	hook  func(http.Header)
	wrote bool
}

func (h *hooked) WriteHeader(code int) {
	if !h.wrote {
		h.wrote = true
		h.hook(h.Header())
	}
	h.ResponseWriter.WriteHeader(code)
}

func (h *hooked) Write(b []byte) (int, error) {
	if !h.wrote {
		h.WriteHeader(http.StatusOK)
	}
	return h.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (h *hooked) Unwrap() http.ResponseWriter { return h.ResponseWriter }

// Flush flushes the underlying writer when it can.
func (h *hooked) Flush() {
	if f, ok := h.ResponseWriter.(http.Flusher); ok {
		if !h.wrote {
			h.WriteHeader(http.StatusOK)
		}
		f.Flush()
	}
}
