package help

import (
	"embed"
	"strings"
)

//go:embed *.md
var pages embed.FS

// Topic is one page of the reference.
type Topic struct {
	// Name is what ferry help takes, the page's file name without .md.
	Name string
	// Summary says in one line what the page covers.
	Summary string
}

// Topics are the reference's pages in reading order: one per markdown file
// of this folder (a test checks both ways).
var Topics = []Topic{
	{"release", "the release file: every field, what resources must carry, user data, limits, capacity"},
	{"pipeline", "pipelines, gates, promotion from a laptop or by the deployer, who may do what"},
	{"commands", "every command in depth: deploy and follow, plan, rollback, destroy, drift, reconcile"},
	{"exit-codes", "the exit status of every command, and the JSON error object"},
	{"statemachine", "every state, retries, how often health is checked, what is stored in S3"},
	{"guarantees", "what a deploy promises (and does not), the swap, the bake, canaries"},
	{"events", "deploy events on EventBridge: each kind, its detail, rules to SNS, chat and GitHub"},
	{"security", "who is trusted with what, what IAM and the code enforce, the SCP to add, the proof"},
	{"local", "the local region, its console, its simulation, where it differs from AWS"},
	{"deploying", "deploying the deployer and bootstrapping target accounts"},
	{"performance", "the benchmark: calls, latency, cost and memory against a reference deployer"},
	{"development", "make targets, conformance against moto, the fault matrix, chaos, fuzzing, the full code map"},
}

// Names are the topics' names, in reading order.
func Names() []string {
	names := make([]string, len(Topics))
	for i, t := range Topics {
		names[i] = t.Name
	}
	return names
}

// Page returns the markdown of the topic named name; ok is false when no
// topic has that name.
func Page(name string) (markdown string, ok bool) {
	for _, t := range Topics {
		if t.Name == name {
			b, err := pages.ReadFile(name + ".md")
			if err != nil {
				panic("help: topic " + name + " has no page: " + err.Error()) // the embedded pages are fixed at build time
			}
			return string(b), true
		}
	}
	return "", false
}

// Title is the page's first heading, without its #: "Guarantees and
// limits".
func Title(markdown string) string {
	for _, l := range strings.Split(markdown, "\n") {
		if t, ok := strings.CutPrefix(l, "# "); ok {
			return strings.TrimSpace(t)
		}
	}
	return ""
}

// topicOf returns the topic a link's target names ("guarantees.md",
// "security.md#the-proof"), and the anchor after it; ok is false for any
// other target.
func topicOf(url string) (name, anchor string, ok bool) {
	file, anchor, _ := strings.Cut(url, "#")
	name, isMD := strings.CutSuffix(file, ".md")
	if !isMD || strings.Contains(name, "/") {
		return "", "", false
	}
	for _, t := range Topics {
		if t.Name == name {
			return name, anchor, true
		}
	}
	return "", "", false
}
