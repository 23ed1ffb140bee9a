package naming_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/ferryhq/ferry/internal/naming"
)

// keyFuncs renders every S3 key function of the package with the
// placeholders the layout comment uses. A new *Key function must be added
// here, and so to the layout comment (TestLayoutCommentListsEveryKey).
var keyFuncs = map[string]func() string{
	"LockKey":        func() string { return naming.LockKey("<project>", "<config>") },
	"HaltKey":        func() string { return naming.HaltKey("<project>", "<config>") },
	"CurrentKey":     func() string { return naming.CurrentKey("<project>", "<config>") },
	"DriftKey":       func() string { return naming.DriftKey("<project>", "<config>") },
	"HealKey":        func() string { return naming.HealKey("<project>", "<config>") },
	"TargetsKey":     func() string { return naming.TargetsKey("<project>", "<config>") },
	"ReleaseKey":     func() string { return naming.ReleaseKey("<project>", "<config>", "<release_id>") },
	"StartKey":       func() string { return naming.StartKey("<account>", "<region>", "<stamp>", "<execution>") },
	"TurnKey":        func() string { return naming.TurnKey("<account>", "<region>", "<stamp>", 20, "<execution>") },
	"StartedKey":     func() string { return naming.StartedKey("<project>", "<config>", "<release_id>") },
	"ReleaseHashKey": func() string { return naming.ReleaseHashKey("<project>", "<config>", "<release_id>") },
	"UserDataKey":    func() string { return naming.UserDataKey("<project>", "<config>", "<release_id>", "<service>") },
	"OutcomeKey":     func() string { return naming.OutcomeKey("<project>", "<config>", "<release_id>") },
	"DeployingKey":   func() string { return naming.DeployingKey("<project>", "<config>", "<release_id>") },
	"DeletingKey":    func() string { return naming.DeletingKey("<project>", "<config>", "<release_id>") },
	"StandbyKey":     func() string { return naming.StandbyKey("<project>", "<config>", "<release_id>") },
	"AnalysisKey":    func() string { return naming.AnalysisKey("<project>", "<config>", "<release_id>") },
	"AssetKey":       func() string { return naming.AssetKey("<project>", "<config>", "<sha256>") },
	"TargetAssetKey": func() string { return naming.TargetAssetKey("<project>", "<config>", "<sha256>") },
	"PipelineKey":    func() string { return naming.PipelineKey("<project>", "<config>") },
	"PromotionRequestKey": func() string {
		return naming.PromotionRequestKey("<project>", "<config>", "<id>")
	},
	"ApprovalKey":      func() string { return naming.ApprovalKey("<project>", "<config>", "<id>") },
	"PromotionTurnKey": func() string { return naming.PromotionTurnKey("<project>", "<config>", "<id>") },
	"VerifiedApprovalKey": func() string {
		return naming.VerifiedApprovalKey("<project>", "<config>", "<id>", "<stage>", "<sha256>")
	},
	"PromotionHaltKey": func() string { return naming.PromotionHaltKey("<project>", "<config>", "<id>") },
	"PromotionRecordKey": func() string {
		return naming.PromotionRecordKey("<project>", "<config>", "<id>")
	},
}

// parsePackage returns the package's non-test files.
func parsePackage(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, parser.ParseComments)
	require.NoError(t, err)
	pkg, ok := pkgs["naming"]
	require.True(t, ok, "package naming not found")
	var files []*ast.File
	for _, f := range pkg.Files {
		files = append(files, f)
	}
	return fset, files
}

func TestEveryKeyFunctionIsChecked(t *testing.T) {
	_, files := parsePackage(t)
	var found []string
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if ok && fn.Recv == nil && fn.Name.IsExported() && strings.HasSuffix(fn.Name.Name, "Key") {
				found = append(found, fn.Name.Name)
			}
		}
	}
	var want []string
	for name := range keyFuncs {
		want = append(want, name)
	}
	sort.Strings(found)
	sort.Strings(want)
	assert.Equal(t, want, found, "every exported *Key function is in keyFuncs, and only those")
}

// layout returns the first field of each indented line of the layout
// comment (the doc comment of Prefix in naming.go).
func layout(t *testing.T) []string {
	t.Helper()
	fset, files := parsePackage(t)
	for _, f := range files {
		if !strings.HasSuffix(fset.Position(f.Pos()).Filename, "naming.go") {
			continue
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Name.Name != "Prefix" || fn.Doc == nil {
				continue
			}
			var keys []string
			for _, line := range strings.Split(fn.Doc.Text(), "\n") {
				if strings.HasPrefix(line, "\t") {
					keys = append(keys, strings.Fields(line)[0])
				}
			}
			return keys
		}
	}
	t.Fatal("naming.go has no documented func Prefix")
	return nil
}

func TestLayoutCommentListsEveryKey(t *testing.T) {
	documented := layout(t)
	require.NotEmpty(t, documented)
	var rendered []string
	for name, render := range keyFuncs {
		key := render()
		rendered = append(rendered, key)
		assert.Contains(t, documented, key, "%s is missing from the layout comment", name)
	}
	for _, key := range documented {
		assert.Contains(t, rendered, key, "the layout comment lists %s, which no key function makes", key)
	}
}

// No client key is a deployer-only key: whatever a project's name, its
// prefix (what a client may write) never holds a key under StatePrefix (what
// only the deployer writes).
func TestClientPrefixesNeverHoldState(t *testing.T) {
	for _, project := range []string{"a/b", "state/x", "0/_state", "a.b/c-d"} {
		assert.False(t, strings.HasPrefix(naming.Prefix(project, "c"), naming.StatePrefix), project)
		assert.False(t, strings.HasPrefix(naming.ProjectPrefix(project), naming.StatePrefix), project)
	}
}

func TestKeysStayUnderTheirPrefixes(t *testing.T) {
	tests := []struct {
		name, key, prefix string
	}{
		{"lock", naming.LockKey("org/app", "prod"), naming.StateConfigPrefix("org/app", "prod")},
		{"halt", naming.HaltKey("org/app", "prod"), naming.Prefix("org/app", "prod")},
		{"current", naming.CurrentKey("org/app", "prod"), naming.StateConfigPrefix("org/app", "prod")},
		{"drift", naming.DriftKey("org/app", "prod"), naming.StateConfigPrefix("org/app", "prod")},
		{"heal", naming.HealKey("org/app", "prod"), naming.StateConfigPrefix("org/app", "prod")},
		{"targets", naming.TargetsKey("org/app", "prod"), naming.StateConfigPrefix("org/app", "prod")},
		{"pipeline", naming.PipelineKey("org/app", "prod"), naming.Prefix("org/app", "prod")},
		{"promotion request", naming.PromotionRequestKey("org/app", "prod", "p1"), naming.Prefix("org/app", "prod")},
		{"approval", naming.ApprovalKey("org/app", "prod", "p1"), naming.Prefix("org/app", naming.PromotionsSegment)},
		{"promotion halt", naming.PromotionHaltKey("org/app", "prod", "p1"), naming.Prefix("org/app", "prod")},
		{"promotion record", naming.PromotionRecordKey("org/app", "prod", "p1"), naming.StateConfigPrefix("org/app", "prod")},
		{"verified approval", naming.VerifiedApprovalKey("org/app", "prod", "p1", "production", "ab"), naming.StateConfigPrefix("org/app", "prod")},
		{"asset", naming.AssetKey("org/app", "prod", "ab"), naming.Prefix("org/app", "prod")},
		{"release", naming.ReleaseKey("org/app", "prod", "r1"), naming.ReleasePrefix("org/app", "prod", "r1")},
		{"started", naming.StartedKey("org/app", "prod", "r1"), naming.StateConfigPrefix("org/app", "prod") + "r1/"},
		{"release hash", naming.ReleaseHashKey("org/app", "prod", "r1"), naming.StateConfigPrefix("org/app", "prod") + "r1/"},
		{"user data", naming.UserDataKey("org/app", "prod", "r1", "web"), naming.StateConfigPrefix("org/app", "prod") + "r1/"},
		{"outcome", naming.OutcomeKey("org/app", "prod", "r1"), naming.StateConfigPrefix("org/app", "prod") + "r1/"},
		{"deploying", naming.DeployingKey("org/app", "prod", "r1"), naming.StateConfigPrefix("org/app", "prod") + "r1/"},
		{"deleting", naming.DeletingKey("org/app", "prod", "r1"), naming.StateConfigPrefix("org/app", "prod") + "r1/"},
		{"state under the state prefix", naming.StateConfigPrefix("org/app", "prod"), naming.StatePrefix},
		{"project-config under project", naming.Prefix("org/app", "prod"), naming.ProjectPrefix("org/app")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.True(t, strings.HasPrefix(tc.key, tc.prefix), "%s not under %s", tc.key, tc.prefix)
			assert.NotEqual(t, tc.prefix, tc.key)
		})
	}
}

// TestDocSaysWhoWritesEveryObject keeps the package doc's table (who
// writes each object, when and how) naming every key the layout has.
func TestDocSaysWhoWritesEveryObject(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	require.NoError(t, err)
	for name, key := range keyFuncs {
		object := key()
		for _, dir := range []string{"<release_id>/", "<config>/"} {
			if i := strings.LastIndex(object, dir); i >= 0 {
				object = object[i+len(dir):]
				break
			}
		}
		assert.Regexp(t, `(?m)^//\t`+regexp.QuoteMeta(object)+` `, string(doc), "%s: doc.go's table has no row for %s", name, object)
	}
}

// Execution names are injective on valid coordinates, stay within Step
// Functions' 80 characters of [A-Za-z0-9_-] (StartExecution, Step
// Functions API Reference: names used with CloudWatch Logs), and the same
// release always gets the same name.
func TestExecutionName(t *testing.T) {
	assert.Equal(t, "coinbase_deploy-test_development_20250304T100000Z-a1b2c3",
		naming.ExecutionName("coinbase/deploy-test", "development", "20250304T100000Z-a1b2c3"))
	// Pairs the old name ('/', '.', '_' and '-' all '-') could not tell apart.
	pairs := [][2][3]string{
		{{"a/b-c", "d", "r"}, {"a/b", "c-d", "r"}},
		{{"a/b.c", "d", "r"}, {"a/b-c", "d", "r"}},
		{{"a/b_c", "d", "r"}, {"a/b.c", "d", "r"}},
		{{"a.b/c", "d", "r"}, {"a/b.c", "d", "r"}},
		{{"a/b", "c", "d-r"}, {"a/b", "c-d", "r"}},
		{{"a/b", "c", "r"}, {"a-b/c", "x", "r"}},
	}
	for _, p := range pairs {
		assert.NotEqual(t, naming.ExecutionName(p[0][0], p[0][1], p[0][2]), naming.ExecutionName(p[1][0], p[1][1], p[1][2]), "%v", p)
	}
	allowed := regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)
	seen := map[string][3]string{}
	orgs := []string{"a", "a.b", "a_b", "a-b", strings.Repeat("o", 31)}
	names := []string{"x", "x.y", "x_y", "x-y", strings.Repeat("n", 32)}
	for _, org := range orgs {
		for _, n := range names {
			for _, config := range []string{"c", "c-d", strings.Repeat("c", 32)} {
				for _, id := range []string{"r", "R-1", strings.Repeat("r", 64), strings.Repeat("r", 63) + "s"} {
					coords := [3]string{org + "/" + n, config, id}
					name := naming.ExecutionName(coords[0], coords[1], coords[2])
					require.Regexp(t, allowed, name)
					if other, dup := seen[name]; dup {
						t.Fatalf("%v and %v share the name %s", other, coords, name)
					}
					seen[name] = coords
					assert.Equal(t, name, naming.ExecutionName(coords[0], coords[1], coords[2]))
					project, config, id, ok := naming.ParseExecutionName(name)
					if !strings.Contains(name, "__") {
						require.True(t, ok, name)
						assert.Equal(t, coords, [3]string{project, config, id}, "%s reads back", name)
					} else {
						assert.False(t, ok, "a cut name %s does not read back", name)
					}
				}
			}
		}
	}
}

func TestParseExecutionNameRefuses(t *testing.T) {
	for _, name := range []string{"", "a_b_c", "a_b_c_d_e", "a__b_c", "a_b__0123456789abcdef", "_b_c_d"} {
		_, _, _, ok := naming.ParseExecutionName(name)
		assert.False(t, ok, "%q", name)
	}
}

// TestStateKeyPatterns: every deployer-only record but the lock matches
// one of the other patterns and not the lock's, and the lock matches only
// its own, so the bucket policy that lets an operator delete locks lets
// them delete nothing else under the state prefix.
func TestStateKeyPatterns(t *testing.T) {
	lock, others := naming.StateKeyPatterns()
	matchesOther := func(key string) bool {
		for _, p := range others {
			if naming.WildcardMatch(p, key) {
				return true
			}
		}
		return false
	}
	for name, f := range keyFuncs {
		key := strings.NewReplacer("<project>", "org/name", "<config>", "cfg", "<release_id>", "r1", "<service>", "lock", "<sha256>", "ab").Replace(f())
		switch {
		case !strings.HasPrefix(key, naming.StatePrefix):
			assert.False(t, matchesOther(key) || naming.WildcardMatch(lock, key), "%s (%s) is not a state record", name, key)
		case name == "LockKey":
			assert.True(t, naming.WildcardMatch(lock, key), key)
			assert.False(t, matchesOther(key), key)
		default:
			assert.True(t, matchesOther(key), "%s (%s) has no pattern in StateKeyPatterns", name, key)
		}
	}
}

// Start markers sort by start, and StartOf reads back what StartKey
// wrote; any other key under the prefix is not a start.
func TestStartKey(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 678_000_000, time.UTC)
	prefix := naming.StartsPrefix("111111111111", "us-east-1")
	key := naming.StartKey("111111111111", "us-east-1", naming.StartStamp(at), "20300102T030405Z-abc")
	assert.Equal(t, "_state/_starts/111111111111/us-east-1/20300102T030405.678Z-20300102T030405Z-abc", key)
	got, id, ok := naming.StartOf(prefix, key)
	require.True(t, ok)
	assert.True(t, at.Equal(got))
	assert.Equal(t, "20300102T030405Z-abc", id)
	assert.Less(t, key, naming.StartKey("111111111111", "us-east-1", naming.StartStamp(at.Add(time.Millisecond)), "a"))
	for _, k := range []string{prefix + "x", prefix + naming.StartStamp(at) + "-", prefix + naming.StartStamp(at) + "_r", "other/" + key} {
		_, _, ok := naming.StartOf(prefix, k)
		assert.False(t, ok, k)
	}
}

// Turns sort by when they begin, and TurnOf reads back what TurnKey
// wrote; any other key under the prefix is not a turn.
func TestTurnKey(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 678_000_000, time.UTC)
	prefix := naming.TurnsPrefix("111111111111", "us-east-1")
	key := naming.TurnKey("111111111111", "us-east-1", naming.StartStamp(at), 20, "20300102T030405Z-abc")
	assert.Equal(t, "_state/_turns/111111111111/us-east-1/20300102T030405.678Z-20-20300102T030405Z-abc", key)
	got, calls, id, ok := naming.TurnOf(prefix, key)
	require.True(t, ok)
	assert.True(t, at.Equal(got))
	assert.Equal(t, 20, calls)
	assert.Equal(t, "20300102T030405Z-abc", id)
	assert.Less(t, key, naming.TurnKey("111111111111", "us-east-1", naming.StartStamp(at.Add(time.Millisecond)), 1, "a"))
	stamp := naming.StartStamp(at)
	for _, k := range []string{prefix + "x", prefix + stamp + "-20", prefix + stamp + "-20-", prefix + stamp + "-x-a", prefix + stamp + "--1-a", prefix + stamp + "-020-a", "other/" + key} {
		_, _, _, ok := naming.TurnOf(prefix, k)
		assert.False(t, ok, k)
	}
}
