package region

import (
	"encoding/xml"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// stsContentType is the content type of an STS request (the AWS Query
// protocol): a form with Action and Version.
const stsContentType = "application/x-www-form-urlencoded"

// isSTS reports whether req is an STS Query request: a form POSTed to the
// root path, or a query-signed GET of the root path naming an STS Action
// (a pre-signed GetCallerIdentity, an identity proof). S3 never POSTs a
// form to "/", and its GET "/" (ListBuckets) has no Action.
func isSTS(req *http.Request) bool {
	if req.URL.Path != "/" {
		return false
	}
	switch req.Method {
	case http.MethodPost:
		return strings.HasPrefix(req.Header.Get("Content-Type"), stsContentType)
	case http.MethodGet:
		return req.URL.Query().Has("Action")
	}
	return false
}

// The region's one caller: the IAM user ferry local's banner gives the
// key of (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), which ferry
// deploy --local and the region's own Signer sign with.
const (
	localAccessKey = "ferry-local"
	localSecret    = "ferry-local"
)

func localCallerARN(account string) string { return "arn:aws:iam::" + account + ":user/ferry-local" }
func localCallerID(account string) string  { return "AIDAFERRYLOCAL" + account }

// serveSTS serves the one STS call a client makes against the region:
// GetCallerIdentity, answered with the region's account, so that a client
// pointed at the region by AWS_ENDPOINT_URL alone names the deployer as it
// would in that account, and so that the deployer can replay an identity
// proof (package identity). A pre-signed GetCallerIdentity signed with a
// key the world knows (the region's one caller's, localAccessKey) is
// answered as AWS does (sim.ProofSTS): its signature checked over the
// headers sent, and its expiry. Otherwise, like every request to the
// region, it is not authenticated (the region cannot know the secret of a
// key it never issued): any signature names the one local caller. Any
// other action is InvalidAction.
func (r *Region) serveSTS(w http.ResponseWriter, req *http.Request) {
	if r.serveProof(w, req) {
		return
	}
	req.Body = http.MaxBytesReader(w, req.Body, maxRequestBytes)
	if err := req.ParseForm(); err != nil {
		writeSTSError(w, "MalformedQueryString", "the request body does not decode: "+err.Error())
		return
	}
	switch action := req.Form.Get("Action"); action {
	case "GetCallerIdentity":
		account := r.info.Account
		type result struct {
			Arn     string `xml:"Arn"`
			UserID  string `xml:"UserId"`
			Account string `xml:"Account"`
		}
		writeSTS(w, http.StatusOK, struct {
			XMLName  xml.Name `xml:"https://sts.amazonaws.com/doc/2011-06-15/ GetCallerIdentityResponse"`
			Result   result   `xml:"GetCallerIdentityResult"`
			Metadata struct {
				RequestID string `xml:"RequestId"`
			} `xml:"ResponseMetadata"`
		}{Result: result{Arn: localCallerARN(account), UserID: localCallerID(account), Account: account}})
	case "":
		writeSTSError(w, "MissingAction", "the request names no Action")
	default:
		writeSTSError(w, "InvalidAction", "the local region serves only the STS action GetCallerIdentity, not "+action)
	}
}

// serveProof answers req when it is a pre-signed GET signed with a key
// the world knows, and reports whether it did.
func (r *Region) serveProof(w http.ResponseWriter, req *http.Request) bool {
	if req.Method != http.MethodGet {
		return false
	}
	key, _, _ := strings.Cut(req.URL.Query().Get("X-Amz-Credential"), "/")
	sts := r.world.ProofSTS()
	if key == "" || !sts.Issued(key) {
		return false
	}
	resp, err := sts.Do(req)
	if err != nil {
		writeSTSError(w, "InternalFailure", err.Error())
		return true
	}
	defer resp.Body.Close()
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.Header().Set("X-Amzn-Requestid", requestID())
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
	return true
}

// writeSTSError writes an error of the AWS Query protocol.
func writeSTSError(w http.ResponseWriter, code, msg string) {
	type detail struct {
		Type    string `xml:"Type"`
		Code    string `xml:"Code"`
		Message string `xml:"Message"`
	}
	writeSTS(w, http.StatusBadRequest, struct {
		XMLName   xml.Name `xml:"https://sts.amazonaws.com/doc/2011-06-15/ ErrorResponse"`
		Error     detail   `xml:"Error"`
		RequestID string   `xml:"RequestId"`
	}{Error: detail{Type: "Sender", Code: code, Message: msg}, RequestID: requestID()})
}

func writeSTS(w http.ResponseWriter, status int, v any) {
	b, err := xml.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	b = append([]byte(xml.Header), b...)
	w.Header().Set("Content-Type", "text/xml")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Header().Set("X-Amzn-Requestid", requestID())
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
