// Package sameorigin owns the local servers' defence against the web pages
// their user opens. The local region (and its S3 server) listens on the
// user's machine without authentication, so any page a browser shows can
// send it requests: a form POST, or a fetch that needs no CORS preflight
// (text/plain, multipart/form-data or application/x-www-form-urlencoded).
//
// Guard refuses, with 403 and a message saying why, every request that
// could change state (any method but GET and HEAD) whose Origin is not the
// server's own, or whose Sec-Fetch-Site says another site or origin sent
// it, and every CORS preflight: the console is served from the same
// origin, and the AWS SDKs and CLI send no Origin, so they are unaffected.
// It answers no CORS header at all, so no other page can read a response
// either. ContentType lets an endpoint refuse a body whose media type is
// not the one it expects (a page can send only the three above without a
// preflight, which Guard refuses). ServeAsAttachment makes a response
// unrenderable as a page of the server's origin: Content-Disposition:
// attachment, X-Content-Type-Options: nosniff and a sandboxing
// Content-Security-Policy, so an object someone uploaded cannot script the
// console.
//
// Not covered: DNS rebinding (a page whose host name resolves to the
// loopback address is same-origin with itself); bind the region to a
// loopback address, as it does by default.
package sameorigin
